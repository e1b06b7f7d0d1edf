// The slice op: values [offset, offset + length) of every row, and its shape rule.
#include "ops/slice.h"

#include <gtest/gtest.h>

#include "ops/error.h"
#include "tests/ops/op_harness.h"
#include "tests/ops/op_test_util.h"

namespace gguflow {
namespace {

using ops::kTokenDim;

std::vector<double> sliced(const std::vector<float>& x, int64_t n, int64_t offset, int64_t length) {
  std::vector<double> want;
  for (size_t r = 0; r < x.size() / static_cast<size_t>(n); ++r)
    for (int64_t i = offset; i < offset + length; ++i) want.push_back(x[r * n + i]);
  return want;
}

TEST(SliceOp, SplitsAFusedQkvRowByRow) {
  // phi3's attn_qkv output: q [96], k [32], v [32] per token.
  const int64_t n = 160, T = 5;
  const auto qkv = test::random_floats(n * T, 51, 0.0f, 4.0f);
  for (auto [offset, length] : {std::pair<int64_t, int64_t>{0, 96}, {96, 32}, {128, 32}, {0, 160},
                                {159, 1}}) {
    SCOPED_TRACE(offset);
    std::vector<float> y(length * T);
    ops::slice(qkv.data(), y.data(), T, n, offset, length);
    test::expect_close(y, sliced(qkv, n, offset, length), 0.0);
    test::OpCase c{"slice", {{{n, kTokenDim}}}, {}, {}, {{"offset", offset}, {"length", length}}};
    test::expect_close(test::run_op(c, {qkv}, T), sliced(qkv, n, offset, length), 0.0);
  }
  // Rows without the token dim: every row of [n, 3], whatever T is.
  test::OpCase c{"slice", {{{n, 3}}}, {}, {}, {{"offset", int64_t{7}}, {"length", int64_t{9}}}};
  const std::vector<float> three(qkv.begin(), qkv.begin() + 3 * n);
  test::expect_close(test::run_op(c, {three}, T), sliced(three, n, 7, 9), 0.0);
}

TEST(SliceOp, ShapeRuleChecksTheRange) {
  test::OpCase c{"slice", {{{160, kTokenDim}}}, {}, {}, {{"offset", int64_t{128}}, {"length", int64_t{32}}}};
  std::vector<ops::Shape> out;
  EXPECT_EQ(test::shape_message(c, &out), "");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], (ops::Shape{{32, kTokenDim}}));

  c.attrs = {{"offset", int64_t{130}}, {"length", int64_t{32}}};
  EXPECT_EQ(test::shape_message(c),
            "expected offset + length <= the input's ne0, found offset 130 + length 32 > 160 of "
            "input 'x' [160, T]");
  EXPECT_THROW(test::run_op(c, {std::vector<float>(160)}, 1), Error);
  c.attrs = {{"offset", int64_t{-1}}, {"length", int64_t{32}}};
  EXPECT_EQ(test::shape_message(c), "expected offset >= 0, found offset -1");
  c.attrs = {{"offset", int64_t{0}}, {"length", int64_t{0}}};
  EXPECT_EQ(test::shape_message(c), "expected length > 0, found length 0");
  c.attrs = {{"offset", int64_t{1}}, {"length", INT64_MAX}};  // no overflow in the check
  EXPECT_NE(test::shape_message(c), "");
  c.inputs = {{{160}}};
  c.attrs = {{"offset", int64_t{0}}, {"length", int64_t{32}}};
  EXPECT_EQ(test::shape_message(c), "expected input of rank 2, found input 'x' [160]");
}

}  // namespace
}  // namespace gguflow
