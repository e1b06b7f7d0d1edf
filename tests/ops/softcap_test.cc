// The softcap op: cap * tanh(x / cap), on plain buffers and through its unit.
#include "ops/softcap.h"

#include <cmath>

#include <gtest/gtest.h>

#include "ops/error.h"
#include "tests/ops/op_harness.h"
#include "tests/ops/op_test_util.h"

namespace gguflow {
namespace {

using ops::kTokenDim;

std::vector<double> capped(const std::vector<float>& x, double cap) {
  std::vector<double> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = cap * std::tanh(x[i] / cap);
  return want;
}

// Logit-like values: mostly |x| < cap, some far beyond it (tanh saturates to +-cap), negatives.
std::vector<float> logits(size_t n, uint32_t seed) {
  auto x = test::random_floats(n, seed, 0.0f, 20.0f);
  for (float v : {0.0f, -0.0f, 1e-30f, 29.9f, -30.1f, 150.0f, -150.0f, 1e6f, -1e6f, 3e38f, -3e38f})
    x.push_back(v);
  return x;
}

TEST(SoftcapOp, MatchesADoubleReferenceIncludingSaturation) {
  for (float cap : {30.0f, 50.0f, 0.5f}) {
    SCOPED_TRACE(cap);
    const auto x = logits(500, 31);
    std::vector<float> y(x.size());
    ops::softcap(x.data(), y.data(), static_cast<int64_t>(x.size()), cap);
    // float tanh (about an ulp) and the roundings of 1/cap, x * (1/cap) and * cap.
    test::expect_close(y, capped(x, cap), 0.0, 2.5e-7);
    for (size_t i = 0; i < x.size(); ++i) ASSERT_LE(std::fabs(y[i]), cap) << x[i];
  }
}

TEST(SoftcapOp, BindsCapAndRunsEveryToken) {
  const int64_t n = 40, T = 2;
  const auto x = test::random_floats(n * T, 32, 0.0f, 40.0f);
  test::OpCase c{"softcap", {{{n, kTokenDim}}}, {}, {}, {{"cap", 30.0}}};
  test::expect_close(test::run_op(c, {x}, T), capped(x, 30.0), 0.0, 2.5e-7);
  c.attrs = {{"cap", int64_t{50}}};  // YAML `cap: 50`
  test::expect_close(test::run_op(c, {x}, T), capped(x, 50.0), 0.0, 2.5e-7);
}

// As gemma 2's final logit softcap: the graph output of a prompt whose caller keeps only the
// last logits is that row alone, as row 0 (the unary ops share this through their binding).
TEST(SoftcapOp, HonoursLastOutputOnlyAsTheGraphOutput) {
  const int64_t n = 40, T = 4;
  const auto x = test::random_floats(n * T, 33, 0.0f, 40.0f);
  const auto all = capped(x, 30.0);
  test::OpCase c{"softcap", {{{n, kTokenDim}}}, {}, {}, {{"cap", 30.0}}};
  bool honoured = true;
  // Not the graph output: every row, whatever the flag.
  test::expect_close(test::run_op(c, {x}, T, true, &honoured), all, 0.0, 2.5e-7);
  EXPECT_FALSE(honoured);
  c.graph_output = true;
  test::expect_close(test::run_op(c, {x}, T, false, &honoured), all, 0.0, 2.5e-7);
  EXPECT_TRUE(honoured);
  auto last = test::run_op(c, {x}, T, true);
  last.resize(n);
  test::expect_close(last, std::vector<double>(all.end() - n, all.end()), 0.0, 2.5e-7);
}

TEST(SoftcapOp, ShapeRuleWantsAPositiveCapAndRankTwo) {
  test::OpCase c{"softcap", {{{64, kTokenDim}}}, {}, {}, {{"cap", 0.0}}};
  EXPECT_EQ(test::shape_message(c), "expected attribute 'cap' > 0, found 0.0");
  c.attrs = {{"cap", -30.0}};
  EXPECT_EQ(test::shape_message(c), "expected attribute 'cap' > 0, found -30.0");
  c.attrs = {{"cap", 1e-300}};  // positive, but 0 as a float
  EXPECT_EQ(test::shape_message(c), "expected attribute 'cap' > 0, found 1e-300");
  EXPECT_THROW(test::run_op(c, {std::vector<float>(64)}, 1), Error);
  c.attrs = {{"cap", 30.0}};
  EXPECT_EQ(test::shape_message(c), "");
  c.inputs = {{{64, kTokenDim, 2}}};
  EXPECT_EQ(test::shape_message(c), "expected input of rank 2, found input 'x' [64, T, 2]");
}

}  // namespace
}  // namespace gguflow
