// The scale op: x * (float)factor, on plain buffers and through its unit (shape rule, bind).
#include "ops/scale.h"

#include <cmath>

#include <gtest/gtest.h>

#include "ops/error.h"
#include "tests/ops/op_harness.h"
#include "tests/ops/op_test_util.h"
#include "tests/ops/test_kernels.h"

namespace gguflow {
namespace {

using ops::kTokenDim;

std::vector<double> scaled(const std::vector<float>& x, double factor) {
  const double f = static_cast<float>(factor);  // the op rounds the factor to float
  std::vector<double> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = x[i] * f;
  return want;
}

TEST(ScaleOp, MatchesADoubleReferenceAndWorksInPlace) {
  // Gemma's embedding scale: sqrt(n_embd) on small embedding values, plus large and negative ones.
  const double factor = std::sqrt(2048.0);
  auto x = test::random_floats(300, 21, 0.0f, 0.05f);
  const auto big = test::random_floats(40, 22, 0.0f, 300.0f);
  x.insert(x.end(), big.begin(), big.end());
  std::vector<float> y(x.size());
  ops::scale(test::scalar_f32_test_kernels(), x.data(), y.data(), static_cast<int64_t>(x.size()),
             static_cast<float>(factor));
  // One float rounding of the exact product: within half an ulp.
  test::expect_close(y, scaled(x, factor), 0.0, 6e-8);

  std::vector<float> z = x;
  ops::scale(test::scalar_f32_test_kernels(), z.data(), z.data(), static_cast<int64_t>(z.size()),
             -0.125f);
  test::expect_close(z, scaled(x, -0.125), 0.0, 0.0);
}

TEST(ScaleOp, BindsFactorAsFloatOrIntAndRunsEveryToken) {
  const int64_t n = 24, T = 3;
  const auto x = test::random_floats(n * T, 23, 0.5f, 2.0f);
  test::OpCase c{"scale", {{{n, kTokenDim}}}, {}, {}, {{"factor", 2.75}}};
  test::expect_close(test::run_op(c, {x}, T), scaled(x, 2.75), 0.0, 6e-8);
  c.attrs = {{"factor", int64_t{-3}}};  // YAML `factor: -3`
  test::expect_close(test::run_op(c, {x}, T), scaled(x, -3.0), 0.0, 6e-8);
  c.attrs = {{"factor", 0.1}};  // not exact in float: the float rounding is what is multiplied
  test::expect_close(test::run_op(c, {x}, T), scaled(x, 0.1), 0.0, 6e-8);
  // A tensor without the token dim ([n, 1]): one row per step whatever T is.
  c.inputs = {{{n, 1}}};
  const std::vector<float> row(x.begin(), x.begin() + n);
  test::expect_close(test::run_op(c, {row}, T), scaled(row, 0.1), 0.0, 6e-8);
}

TEST(ScaleOp, ShapeRuleWantsRankTwo) {
  test::OpCase c{"scale", {{{64}}}, {}, {}, {{"factor", 2.0}}};
  EXPECT_EQ(test::shape_message(c), "expected input of rank 2, found input 'x' [64]");
  c.inputs = {{{64, kTokenDim}}};
  std::vector<ops::Shape> out;
  EXPECT_EQ(test::shape_message(c, &out), "");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], (ops::Shape{{64, kTokenDim}}));
}

}  // namespace
}  // namespace gguflow
