#include "ops/rmsnorm.h"

#include <gtest/gtest.h>

#include "ops/error.h"
#include "tests/ops/op_harness.h"
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

// Each run of `group` values of each row normalised on its own with the gain w [group].
std::vector<double> group_rmsnorm_ref(const std::vector<float>& x, const std::vector<float>& w,
                                      int64_t group, double eps) {
  std::vector<double> want(x.size());
  for (size_t g0 = 0; g0 < x.size(); g0 += static_cast<size_t>(group)) {
    double ss = 0;
    for (int64_t i = 0; i < group; ++i) ss += double(x[g0 + i]) * x[g0 + i];
    const double s = 1.0 / std::sqrt(ss / group + eps);
    for (int64_t i = 0; i < group; ++i) want[g0 + i] = x[g0 + i] * s * w[i];
  }
  return want;
}

// q of 4 heads of 32 per token, each head at its own scale (1e-3 .. 30), for 3 tokens.
std::vector<float> heads_at_different_scales(int64_t n_head, int64_t head_dim, int64_t T) {
  std::vector<float> x = test::random_floats(n_head * head_dim * T, 5, 0.3f, 1.0f);
  const float scales[] = {1e-3f, 1.0f, 30.0f, 0.2f};
  for (size_t i = 0; i < x.size(); ++i) x[i] *= scales[(i / head_dim) % 4];
  return x;
}

TEST(RmsnormOp, GroupsNormaliseEachHeadOnItsOwn) {
  const int64_t n_head = 4, head_dim = 32, T = 3, n = n_head * head_dim;
  const float eps = 1e-6f;
  const auto x = heads_at_different_scales(n_head, head_dim, T);
  const auto w = test::random_floats(head_dim, 6, 1.0f, 0.3f);
  std::vector<float> y(x.size());
  ops::rmsnorm(test::scalar_f32_test_kernels(), x.data(), w.data(), y.data(), T, n, eps, head_dim);
  const auto want = group_rmsnorm_ref(x, w, head_dim, eps);
  test::expect_close(y, want, 1e-6, 1e-5);

  test::OpCase c{"rmsnorm", {{{n, ops::kTokenDim}}}, {{{head_dim}}}, {w},
                 {{"eps", double{eps}}, {"group_size", head_dim}}};
  test::expect_close(test::run_op(c, {x}, T), want, 1e-6, 1e-5);
  // group_size = n is the whole row, as the default 0 (with a gain of n).
  const auto wn = test::random_floats(n, 7, 1.0f, 0.3f);
  c = {"rmsnorm", {{{n, ops::kTokenDim}}}, {{{n}}}, {wn}, {{"eps", 1e-5}}};
  const auto whole = group_rmsnorm_ref(x, wn, n, 1e-5);
  test::expect_close(test::run_op(c, {x}, T), whole, 1e-6, 1e-5);
  c.attrs.push_back({"group_size", n});
  test::expect_close(test::run_op(c, {x}, T), whole, 1e-6, 1e-5);
}

TEST(RmsnormOp, ShapeRuleChecksTheGroup) {
  test::OpCase c{"rmsnorm", {{{128, ops::kTokenDim}}}, {{{32}}}, {}, {{"eps", 1e-6}}};
  EXPECT_EQ(test::shape_message(c),
            "expected the weight's length to equal the input's ne0, found input 'x' [128, T] and "
            "weight 'test.weight' [32]");
  c.attrs.push_back({"group_size", int64_t{32}});
  EXPECT_EQ(test::shape_message(c), "");
  c.attrs.back().second = int64_t{48};
  EXPECT_EQ(test::shape_message(c),
            "expected group_size to divide the input's ne0, found group_size 48 and input 'x' "
            "[128, T]");
  c.attrs.back().second = int64_t{64};
  EXPECT_EQ(test::shape_message(c),
            "expected the weight's length to equal group_size, found group_size 64 and weight "
            "'test.weight' [32]");
  c.attrs.back().second = int64_t{-32};
  EXPECT_EQ(test::shape_message(c), "expected group_size >= 0, found group_size -32");
  c.inputs = {{{128}}};
  EXPECT_EQ(test::shape_message(c), "expected input of rank 2, found input 'x' [128]");
}

}  // namespace
}  // namespace gguflow
