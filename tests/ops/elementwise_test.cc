// Unit tests of the small element-wise ops: add, mul, silu_mul.
#include <gtest/gtest.h>

#include "ops/add.h"
#include "ops/mul.h"
#include "ops/silu_mul.h"
#include "tests/ops/op_test_util.h"
#include "tests/ops/test_kernels.h"

namespace gguflow {
namespace {

TEST(ElementwiseOps, AddMulAndSiluMulMatchDoubleReferences) {
  const auto& k = test::scalar_f32_test_kernels();
  const int64_t n = 37;
  const auto a = test::random_floats(n, 11, 0.0f, 4.0f), b = test::random_floats(n, 12);
  std::vector<float> sum(n), prod(n), swiglu(n);
  ops::add(k, a.data(), b.data(), sum.data(), n);
  ops::mul(k, a.data(), b.data(), prod.data(), n);
  ops::silu_mul(k, a.data(), b.data(), swiglu.data(), n);
  std::vector<double> want_sum(n), want_prod(n), want_swiglu(n);
  for (int64_t i = 0; i < n; ++i) {
    want_sum[i] = double(a[i]) + b[i];
    want_prod[i] = double(a[i]) * b[i];
    want_swiglu[i] = a[i] / (1.0 + std::exp(-double(a[i]))) * b[i];
  }
  test::expect_close(sum, want_sum, 1e-6, 1e-6);
  test::expect_close(prod, want_prod, 1e-6, 1e-6);
  test::expect_close(swiglu, want_swiglu, 1e-6, 1e-5);
}

}  // namespace
}  // namespace gguflow
