// Unit tests of the embedding-graph ops: pool over tokens and L2 normalize.
#include <gtest/gtest.h>

#include "ops/normalize.h"
#include "ops/pool.h"
#include "ops/error.h"
#include "tests/ops/op_test_util.h"
#include "tests/ops/test_kernels.h"

namespace gguflow {
namespace {

TEST(PoolOp, EveryModeMatchesItsDefinition) {
  const auto& k = test::scalar_f32_test_kernels();
  const int64_t n_tok = 4, n = 5;
  const auto x = test::random_floats(n_tok * n, 13);
  for (const char* name : {"none", "mean", "sum", "last", "first", "cls"}) {
    const auto mode = ops::parse_pool_mode(name);
    const int64_t rows = ops::pool_output_rows(mode, n_tok);
    std::vector<float> y(rows * n);
    ops::pool(k, mode, x.data(), n_tok, n, y.data());
    std::vector<double> want(rows * n);
    for (int64_t i = 0; i < n; ++i) {
      double s = 0;
      for (int64_t t = 0; t < n_tok; ++t) s += x[t * n + i];
      const std::string m = name;
      if (m == "none")
        for (int64_t t = 0; t < n_tok; ++t) want[t * n + i] = x[t * n + i];
      else if (m == "mean") want[i] = s / n_tok;
      else if (m == "sum") want[i] = s;
      else if (m == "last") want[i] = x[(n_tok - 1) * n + i];
      else want[i] = x[i];
    }
    SCOPED_TRACE(name);
    test::expect_close(y, want, 1e-6, 1e-6);
  }
  EXPECT_THROW(ops::parse_pool_mode("max"), Error);
}

TEST(NormalizeOp, L2GivesUnitRowsAndNoneCopies) {
  const auto& k = test::scalar_f32_test_kernels();
  const int64_t rows = 3, n = 9;
  auto x = test::random_floats(rows * n, 14);
  std::fill(x.begin() + 2 * n, x.end(), 0.0f);  // a zero row stays zero
  std::vector<float> y(x.size()), copy(x.size());
  ops::normalize(k, ops::parse_normalize_mode("l2"), x.data(), y.data(), rows, n);
  ops::normalize(k, ops::parse_normalize_mode("none"), x.data(), copy.data(), rows, n);
  EXPECT_EQ(copy, x);
  std::vector<double> want(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < n; ++i) ss += double(x[r * n + i]) * x[r * n + i];
    const double norm = std::max(std::sqrt(ss), 1e-12);
    for (int64_t i = 0; i < n; ++i) want[r * n + i] = x[r * n + i] / norm;
  }
  test::expect_close(y, want, 1e-6, 1e-6);
  EXPECT_THROW(ops::parse_normalize_mode("l1"), Error);
}

}  // namespace
}  // namespace gguflow
