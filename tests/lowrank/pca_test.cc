// PCA math against hand-checkable matrices: known eigenvalues, rank-deficient data, and the
// identity "mean squared reconstruction error = sum of the dropped eigenvalues".
#include "runtime/lowrank/pca.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ops/error.h"
#include "tests/lowrank/random_orthonormal.h"

namespace gguflow::lowrank {
namespace {

TEST(Pca, DiagonalMatrixEigenvaluesSortedDescending) {
  const std::vector<double> a = {1, 0, 0, 0, 5, 0, 0, 0, 3};
  const EigenSystem e = symmetric_eigen(a, 3);
  EXPECT_DOUBLE_EQ(e.values[0], 5);
  EXPECT_DOUBLE_EQ(e.values[1], 3);
  EXPECT_DOUBLE_EQ(e.values[2], 1);
  EXPECT_DOUBLE_EQ(e.vectors[0 * 3 + 1], 1);  // eigenvector of 5 is e_1
  EXPECT_DOUBLE_EQ(e.vectors[1 * 3 + 2], 1);  // of 3 is e_2
}

TEST(Pca, TwoByTwoByHand) {
  // [[2, 1], [1, 2]]: eigenvalues 3 (vector (1,1)/sqrt2) and 1 (vector (1,-1)/sqrt2).
  const EigenSystem e = symmetric_eigen(std::vector<double>{2, 1, 1, 2}, 2);
  EXPECT_NEAR(e.values[0], 3, 1e-14);
  EXPECT_NEAR(e.values[1], 1, 1e-14);
  EXPECT_NEAR(std::fabs(e.vectors[0]), std::sqrt(0.5), 1e-14);
  EXPECT_NEAR(e.vectors[0], e.vectors[1], 1e-14);
  EXPECT_NEAR(e.vectors[2], -e.vectors[3], 1e-14);
}

// A = Q diag(lambda) Q^T with a random orthogonal Q (Gram-Schmidt): Jacobi must recover lambda
// and A v = lambda v for every pair, at the Qwen2.5 layer size (2 KV heads x 64 = 128).
TEST(Pca, RandomRotationOfKnownSpectrum128) {
  const int64_t n = 128;
  std::mt19937_64 rng(7);
  const std::vector<double> q = test::random_orthonormal(n, rng);
  std::vector<double> lambda(n), a(n * n, 0.0);
  for (int64_t i = 0; i < n; ++i) lambda[i] = std::pow(0.9, static_cast<double>(i)) * 10;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < n; ++c)
      for (int64_t k = 0; k < n; ++k) a[r * n + c] += q[k * n + r] * lambda[k] * q[k * n + c];
  for (int64_t r = 0; r < n; ++r)  // exact symmetry despite rounding
    for (int64_t c = 0; c < r; ++c) a[r * n + c] = a[c * n + r];
  const EigenSystem e = symmetric_eigen(a, n);
  for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(e.values[i], lambda[i], 1e-10) << i;
  for (int64_t k = 0; k < n; k += 17) {
    for (int64_t r = 0; r < n; ++r) {
      double av = 0;
      for (int64_t c = 0; c < n; ++c) av += a[r * n + c] * e.vectors[k * n + c];
      EXPECT_NEAR(av, e.values[k] * e.vectors[k * n + r], 1e-10);
    }
  }
}

TEST(Pca, CovarianceOfHandData) {
  // Samples (1, 2), (3, 2), (5, 2): mean (3, 2); variance of x is 8/3, y is constant.
  CovarianceAccumulator acc(2);
  for (float x : {1.f, 3.f, 5.f}) acc.add(std::vector<float>{x, 2.f});
  EXPECT_EQ(acc.count(), 3);
  const auto m = acc.mean();
  EXPECT_DOUBLE_EQ(m[0], 3);
  EXPECT_DOUBLE_EQ(m[1], 2);
  const auto c = acc.covariance();
  EXPECT_NEAR(c[0], 8.0 / 3.0, 1e-12);
  EXPECT_NEAR(c[1], 0, 1e-12);
  EXPECT_NEAR(c[3], 0, 1e-12);
}

TEST(Pca, StridedRowsAddOnlyTheirSlice) {
  // Rows of 4 with a stride of 6: the two trailing values of each row must be ignored.
  const std::vector<float> rows = {1, 2, 3, 4, 99, 99, 5, 6, 7, 8, 99, 99};
  CovarianceAccumulator acc(4);
  acc.add(rows.data(), 2, 6);
  const auto m = acc.mean();
  EXPECT_DOUBLE_EQ(m[0], 3);
  EXPECT_DOUBLE_EQ(m[3], 6);
}

// Points on a 2-D plane inside 6-D space (plus an offset): exactly two nonzero eigenvalues,
// rank 2 reaches energy 1, and a threshold of 1.0 picks rank 2, not 6.
TEST(Pca, RankDeficientDataNeedsOnlyItsRank) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> g;
  const double u[6] = {1, 2, 0, -1, 0.5, 0}, w[6] = {0, 1, -1, 1, 0, 2};
  CovarianceAccumulator acc(6);
  for (int s = 0; s < 500; ++s) {
    const double a = 3 * g(rng), b = g(rng);
    std::vector<float> x(6);
    for (int i = 0; i < 6; ++i) x[i] = static_cast<float>(a * u[i] + b * w[i] + 10.0 * i);
    acc.add(x);
  }
  const Components c = principal_components(acc, 10, "test");
  EXPECT_GT(c.eigen.values[1], 0.1);
  for (int i = 2; i < 6; ++i) EXPECT_NEAR(c.eigen.values[i], 0, 1e-6 * c.eigen.values[0]);
  EXPECT_EQ(rank_for_energy(c.energy, 1.0), 2);
  EXPECT_EQ(rank_for_energy(c.energy, 0.5), 1);
  EXPECT_DOUBLE_EQ(c.energy[0], 0);
  EXPECT_DOUBLE_EQ(c.energy[6], 1);
}

// Mean squared reconstruction error with the top r eigenvectors = sum of dropped eigenvalues.
TEST(Pca, ReconstructionErrorEqualsDroppedEigenvalues) {
  const int64_t d = 8, n = 2000;
  std::mt19937_64 rng(11);
  std::normal_distribution<double> g;
  std::vector<float> data(n * d);
  for (int64_t s = 0; s < n; ++s)
    for (int64_t i = 0; i < d; ++i)  // correlated: each value mixes the previous one
      data[s * d + i] = static_cast<float>((i > 0 ? 0.8 * data[s * d + i - 1] : 0.0) + g(rng) / (1 + i) + 1.0);
  CovarianceAccumulator acc(d);
  acc.add(data.data(), n, d);
  const Components c = principal_components(acc, 1, "test");
  for (int64_t r = 0; r <= d; ++r) {
    double err = 0;
    for (int64_t s = 0; s < n; ++s) {
      std::vector<double> x(d), rec(d);
      for (int64_t i = 0; i < d; ++i) x[i] = data[s * d + i] - c.mean[i];
      for (int64_t k = 0; k < r; ++k) {
        double coord = 0;
        for (int64_t i = 0; i < d; ++i) coord += c.eigen.vectors[k * d + i] * x[i];
        for (int64_t i = 0; i < d; ++i) rec[i] += coord * c.eigen.vectors[k * d + i];
      }
      for (int64_t i = 0; i < d; ++i) err += (x[i] - rec[i]) * (x[i] - rec[i]);
    }
    err /= static_cast<double>(n);
    double dropped = 0;
    for (int64_t k = r; k < d; ++k) dropped += c.eigen.values[k];
    EXPECT_NEAR(err, dropped, 1e-9 * (1 + c.eigen.values[0])) << "rank " << r;
  }
}

TEST(Pca, EnergyCurveAndRankThresholds) {
  const std::vector<double> values = {6, 2, 1, 1, -1e-17};
  const auto e = cumulative_energy(values);
  ASSERT_EQ(e.size(), 6u);
  EXPECT_DOUBLE_EQ(e[1], 0.6);
  EXPECT_DOUBLE_EQ(e[2], 0.8);
  EXPECT_DOUBLE_EQ(e[3], 0.9);
  EXPECT_EQ(rank_for_energy(e, 0.6), 1);
  EXPECT_EQ(rank_for_energy(e, 0.61), 2);
  EXPECT_EQ(rank_for_energy(e, 0.9), 3);
  EXPECT_EQ(rank_for_energy(e, 1.0), 4);  // the negative rounding value adds nothing
}

TEST(Pca, TooFewSamplesIsAClearError) {
  CovarianceAccumulator acc(4);
  acc.add(std::vector<float>{1, 2, 3, 4});
  try {
    principal_components(acc, 8, "layer 0 K");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer 0 K: 1 vectors are too few"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gguflow::lowrank
