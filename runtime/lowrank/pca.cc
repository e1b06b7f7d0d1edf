#include "runtime/lowrank/pca.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ops/error.h"

namespace gguflow::lowrank {

CovarianceAccumulator::CovarianceAccumulator(int64_t dim)
    : dim_(dim), sum_(static_cast<size_t>(dim), 0.0),
      second_(static_cast<size_t>(dim * dim), 0.0) {
  GGUFLOW_CHECK(dim > 0);
}

void CovarianceAccumulator::add(const float* rows, int64_t n, int64_t stride) {
  GGUFLOW_CHECK(stride >= dim_);
  std::vector<double> x(static_cast<size_t>(dim_));  // one sample widened to double
  for (int64_t s = 0; s < n; ++s) {
    const float* row = rows + s * stride;
    for (int64_t i = 0; i < dim_; ++i) x[i] = row[i];
    for (int64_t i = 0; i < dim_; ++i) {
      sum_[i] += x[i];
      double* out = second_.data() + i * dim_;
      const double xi = x[i];
      for (int64_t j = i; j < dim_; ++j) out[j] += xi * x[j];
    }
  }
  count_ += n;
}

std::vector<double> CovarianceAccumulator::mean() const {
  std::vector<double> m(sum_);
  if (count_ > 0)
    for (double& v : m) v /= static_cast<double>(count_);
  return m;
}

std::vector<double> CovarianceAccumulator::covariance() const {
  const std::vector<double> m = mean();
  std::vector<double> c(static_cast<size_t>(dim_ * dim_), 0.0);
  if (count_ == 0) return c;
  const double n = static_cast<double>(count_);
  for (int64_t i = 0; i < dim_; ++i)
    for (int64_t j = i; j < dim_; ++j) {
      // E[x_i x_j] - m_i m_j: the samples' own centring, exact in exact arithmetic.
      const double v = second_[i * dim_ + j] / n - m[i] * m[j];
      c[i * dim_ + j] = v;
      c[j * dim_ + i] = v;
    }
  return c;
}

EigenSystem symmetric_eigen(std::span<const double> input, int64_t dim) {
  GGUFLOW_CHECK(dim > 0 && static_cast<int64_t>(input.size()) == dim * dim);
  const size_t n = static_cast<size_t>(dim);
  std::vector<double> a(input.begin(), input.end());  // [dim][dim], driven to diagonal
  std::vector<double> v(n * n, 0.0);                  // [dim][dim], columns = eigenvectors
  for (size_t i = 0; i < n; ++i) v[i * n + i] = 1.0;
  double scale = 0.0;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) {
      GGUFLOW_CHECK(std::fabs(a[i * n + j] - a[j * n + i]) <=
                    1e-9 * (std::fabs(a[i * n + j]) + std::fabs(a[j * n + i])) + 1e-300);
      scale += a[i * n + j] * a[i * n + j];
    }

  EigenSystem out;
  out.dim = dim;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0.0;
    for (size_t p = 0; p < n; ++p)
      for (size_t q = p + 1; q < n; ++q) off += a[p * n + q] * a[p * n + q];
    out.sweeps = sweep;
    if (off <= 1e-30 * scale || off == 0.0) break;
    for (size_t p = 0; p < n; ++p) {
      for (size_t q = p + 1; q < n; ++q) {
        const double apq = a[p * n + q];
        if (apq == 0.0) continue;
        // Rotation that zeroes a[p][q]: t = tan(theta), the smaller root (stable form).
        const double theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1.0));
        const double c = 1.0 / std::sqrt(t * t + 1.0);
        const double s = t * c;
        for (size_t k = 0; k < n; ++k) {  // columns p, q of a
          const double akp = a[k * n + p], akq = a[k * n + q];
          a[k * n + p] = c * akp - s * akq;
          a[k * n + q] = s * akp + c * akq;
        }
        for (size_t k = 0; k < n; ++k) {  // rows p, q of a
          const double apk = a[p * n + k], aqk = a[q * n + k];
          a[p * n + k] = c * apk - s * aqk;
          a[q * n + k] = s * apk + c * aqk;
        }
        for (size_t k = 0; k < n; ++k) {  // columns p, q of v
          const double vkp = v[k * n + p], vkq = v[k * n + q];
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
    }
  }

  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return a[x * n + x] > a[y * n + y]; });
  out.values.resize(n);
  out.vectors.resize(n * n);
  for (size_t k = 0; k < n; ++k) {
    const size_t col = order[k];
    out.values[k] = a[col * n + col];
    // Sign convention: the largest-magnitude entry positive, so bases are reproducible.
    size_t big = 0;
    for (size_t i = 1; i < n; ++i)
      if (std::fabs(v[i * n + col]) > std::fabs(v[big * n + col])) big = i;
    const double sign = v[big * n + col] < 0 ? -1.0 : 1.0;
    for (size_t i = 0; i < n; ++i) out.vectors[k * n + i] = sign * v[i * n + col];
  }
  return out;
}

std::vector<double> cumulative_energy(std::span<const double> values) {
  std::vector<double> energy(values.size() + 1, 0.0);
  double total = 0.0;
  for (double v : values) total += std::max(v, 0.0);
  if (total <= 0.0) {
    std::fill(energy.begin(), energy.end(), 1.0);
    return energy;
  }
  double running = 0.0;
  for (size_t r = 0; r < values.size(); ++r) {
    running += std::max(values[r], 0.0);
    energy[r + 1] = std::min(1.0, running / total);
  }
  energy.back() = 1.0;
  return energy;
}

int64_t rank_for_energy(std::span<const double> energy, double threshold) {
  GGUFLOW_CHECK(!energy.empty() && threshold > 0.0 && threshold <= 1.0);
  const double target = std::min(threshold, 1.0 - 1e-12);
  for (size_t r = 0; r < energy.size(); ++r)
    if (energy[r] >= target) return static_cast<int64_t>(r);
  return static_cast<int64_t>(energy.size() - 1);
}

Components principal_components(const CovarianceAccumulator& acc, int64_t min_samples,
                                const char* what) {
  if (acc.count() < min_samples)
    throw error(what, ": ", acc.count(), " vectors are too few to estimate a basis of dimension ",
                acc.dim(), ": expected at least ", min_samples,
                " (use a longer text or a larger --ctx)");
  Components c;
  c.samples = acc.count();
  c.mean = acc.mean();
  c.eigen = symmetric_eigen(acc.covariance(), acc.dim());
  c.energy = cumulative_energy(c.eigen.values);
  return c;
}

}  // namespace gguflow::lowrank
