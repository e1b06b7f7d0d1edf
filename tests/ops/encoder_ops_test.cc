// The ops BERT-family encoders added: layernorm, add_row and embed_positions, each against a
// double-precision reference (embed_positions through its shape rule and embed's row lookup;
// its bind-time context check is exercised by tests/embed/encoder_embed_test.cc).
#include <gtest/gtest.h>

#include <cmath>

#include "ops/add_row.h"
#include "ops/layernorm.h"
#include "tests/ops/op_harness.h"
#include "tests/ops/op_test_util.h"

namespace gguflow {
namespace {

// (x - mean) / sqrt(var + eps) * w + b per row, in double; var is the biased variance.
std::vector<double> layernorm_reference(const std::vector<float>& x, const std::vector<float>& w,
                                        const std::vector<float>& b, int64_t n, double eps) {
  std::vector<double> want(x.size());
  for (size_t r0 = 0; r0 < x.size(); r0 += static_cast<size_t>(n)) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < n; ++i) mean += x[r0 + i];
    mean /= n;
    for (int64_t i = 0; i < n; ++i) var += (x[r0 + i] - mean) * (x[r0 + i] - mean);
    var /= n;
    for (int64_t i = 0; i < n; ++i)
      want[r0 + i] = (x[r0 + i] - mean) / std::sqrt(var + eps) * (w.empty() ? 1.0 : w[i]) +
                     (b.empty() ? 0.0 : b[i]);
  }
  return want;
}

TEST(LayernormOp, MatchesADoubleReferenceRowByRow) {
  const int64_t rows = 5, n = 96;
  // Rows far from zero mean: a norm that skipped the mean (rmsnorm) would be far off.
  const auto x = test::random_floats(rows * n, 41, 3.0f, 2.0f);
  const auto w = test::random_floats(n, 42, 1.0f, 0.1f);
  const auto b = test::random_floats(n, 43, 0.0f, 0.5f);
  const auto want = layernorm_reference(x, w, b, n, 1e-12);
  std::vector<float> y(x.size());
  ops::layernorm(x.data(), w.data(), b.data(), y.data(), rows, n, 1e-12f);
  test::expect_close(y, want, 1e-6, 1e-5);
  // In place, as the graph's `out: x` may bind it.
  std::vector<float> inplace = x;
  ops::layernorm(inplace.data(), w.data(), b.data(), inplace.data(), rows, n, 1e-12f);
  EXPECT_EQ(inplace, y);

  test::OpCase c{"layernorm", {{{n, ops::kTokenDim}}}, {{{n}}, {{n}}}, {w, b}, {{"eps", 1e-12}}};
  test::expect_close(test::run_op(c, {x}, rows), want, 1e-6, 1e-5);
  // Without the optional bias; a large eps matters.
  c = {"layernorm", {{{n, ops::kTokenDim}}}, {{{n}}}, {w}, {{"eps", 0.5}}};
  test::expect_close(test::run_op(c, {x}, rows), layernorm_reference(x, w, {}, n, 0.5), 1e-6, 1e-5);
}

TEST(LayernormOp, ShapeRuleNamesTheWeightThatDoesNotFit) {
  test::OpCase c{"layernorm", {{{32, ops::kTokenDim}}}, {{{32}}, {{16}}}, {}, {{"eps", 1e-12}}};
  EXPECT_EQ(test::shape_message(c),
            "expected the weight's length to equal the input's ne0, found input 'x' [32, T] and "
            "weight 'test.bias' [16]");
  c.weights = {{{32}}, {{32}}};
  EXPECT_EQ(test::shape_message(c), "");
}

TEST(AddRowOp, AddsTheChosenRowToEveryToken) {
  const int64_t rows = 4, n = 24, table_rows = 3;
  const auto x = test::random_floats(rows * n, 51);
  const auto table = test::random_floats(table_rows * n, 52);
  for (int64_t pick : {0, 2}) {
    std::vector<double> want(x.size());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < n; ++i)
        want[r * n + i] = double(x[r * n + i]) + table[pick * n + i];
    test::OpCase c{"add_row", {{{n, ops::kTokenDim}}}, {{{n, table_rows}}}, {table}, {}};
    if (pick != 0) c.attrs.push_back({"row", pick});
    test::expect_close(test::run_op(c, {x}, rows), want, 1e-7, 1e-6);
  }
  std::vector<float> y(x.size());
  ops::add_row(x.data(), table.data() + n, y.data(), rows, n);
  EXPECT_FLOAT_EQ(y[n + 5], x[n + 5] + table[n + 5]);
}

TEST(AddRowOp, ShapeRuleChecksTheRowAndWidth) {
  test::OpCase c{"add_row", {{{24, ops::kTokenDim}}}, {{{24, 2}}}, {}, {{"row", int64_t{2}}}};
  EXPECT_EQ(test::shape_message(c),
            "expected 0 <= row < 2 (the rows of weight 'test.weight' [24, 2]), found row 2");
  c.attrs = {};
  c.weights = {{{16, 2}}};
  EXPECT_EQ(test::shape_message(c),
            "expected the table's ne0 to equal the input's ne0, found input 'x' [24, T] and "
            "weight 'test.weight' [16, 2]");
}

TEST(EmbedPositionsOp, ShapeIsTheTableWidthByTheSteps) {
  test::OpCase c{"embed_positions", {{{ops::kTokenDim}}}, {{{32, 512}}}, {}, {}};
  std::vector<ops::Shape> out;
  EXPECT_EQ(test::shape_message(c, &out), "");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], (ops::Shape{{32, ops::kTokenDim}}));
  c.weights = {{{32}}};
  EXPECT_EQ(test::shape_message(c), "expected weight of rank 2, found weight 'test.weight' [32]");
}

}  // namespace
}  // namespace gguflow
