#include "ops/rmsnorm.h"

#include <gtest/gtest.h>

#include "tests/ops/op_test_util.h"
#include "tests/ops/test_kernels.h"

namespace gguflow {
namespace {

TEST(RmsnormOp, MatchesADoubleReferenceRowByRow) {
  const int64_t rows = 3, n = 64;
  const float eps = 1e-5f;
  const auto x = test::random_floats(rows * n, 2, 0.0f, 3.0f);
  const auto w = test::random_floats(n, 3, 1.0f, 0.1f);
  std::vector<float> y(rows * n);
  ops::rmsnorm(test::scalar_f32_test_kernels(), x.data(), w.data(), y.data(), rows, n, eps);
  std::vector<double> want(rows * n);
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < n; ++i) ss += double(x[r * n + i]) * x[r * n + i];
    const double s = 1.0 / std::sqrt(ss / n + eps);
    for (int64_t i = 0; i < n; ++i) want[r * n + i] = x[r * n + i] * s * w[i];
  }
  test::expect_close(y, want, 1e-6, 1e-5);
}

}  // namespace
}  // namespace gguflow
