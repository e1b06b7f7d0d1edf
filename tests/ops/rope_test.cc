#include "ops/rope.h"

#include <gtest/gtest.h>

#include <cstring>

#include "ops/op_registry.h"
#include "tests/ops/op_harness.h"
#include "tests/ops/op_test_util.h"
#include "tests/ops/test_kernels.h"

namespace gguflow {
namespace {

// theta_i = pos * base^(-2i/n_rot) / factor_i, in double.
double theta(int32_t pos, int64_t i, int64_t n_rot, double base, const float* factors = nullptr) {
  return pos * std::pow(base, -2.0 * i / n_rot) / (factors ? factors[i] : 1.0);
}

TEST(RopeOp, CosSinTableFollowsTheFrequencyFormula) {
  const std::vector<int32_t> pos = {0, 1, 7, 100};
  const int64_t n_rot = 64;
  std::vector<float> cs(pos.size() * n_rot);
  ops::rope_cos_sin(pos.data(), pos.size(), n_rot, 1e6f, cs.data());
  std::vector<double> want(cs.size());
  for (size_t t = 0; t < pos.size(); ++t)
    for (int64_t i = 0; i < n_rot / 2; ++i) {
      want[t * n_rot + 2 * i] = std::cos(theta(pos[t], i, n_rot, 1e6));
      want[t * n_rot + 2 * i + 1] = std::sin(theta(pos[t], i, n_rot, 1e6));
    }
  // float theta accumulated by repeated multiplication: ~1e-5 relative error at pos 100.
  test::expect_close(cs, want, 2e-4);
}

// Rotates heads in double with the given pairing; elements past n_rot stay as they are.
std::vector<double> rope_reference(const std::vector<float>& x, const std::vector<int32_t>& pos,
                                   int64_t n_heads, int64_t hd, int64_t n_rot, double base,
                                   bool neox, const float* factors = nullptr) {
  std::vector<double> y(x.begin(), x.end());
  for (size_t t = 0; t < pos.size(); ++t)
    for (int64_t h = 0; h < n_heads; ++h) {
      double* v = y.data() + (t * n_heads + h) * hd;
      for (int64_t i = 0; i < n_rot / 2; ++i) {
        const int64_t i0 = neox ? i : 2 * i, i1 = neox ? i + n_rot / 2 : 2 * i + 1;
        const double th = theta(pos[t], i, n_rot, base, factors), a = v[i0], b = v[i1];
        v[i0] = a * std::cos(th) - b * std::sin(th);
        v[i1] = a * std::sin(th) + b * std::cos(th);
      }
    }
  return y;
}

class RopePairingTest : public ::testing::TestWithParam<bool> {};

TEST_P(RopePairingTest, RotatesThePairsOfEachHead) {
  const bool neox = GetParam();
  const std::vector<int32_t> pos = {0, 3, 11};
  const int64_t n_heads = 3, hd = 16, n_rot = 12;  // partial rotation: last 4 untouched
  auto x = test::random_floats(pos.size() * n_heads * hd, 7);
  const auto want = rope_reference(x, pos, n_heads, hd, n_rot, 10000.0, neox);
  std::vector<float> cs(pos.size() * n_rot);
  ops::rope_cos_sin(pos.data(), pos.size(), n_rot, 10000.0f, cs.data());
  ops::rope(test::scalar_f32_test_kernels(), x.data(), pos.size(), n_heads, hd, n_rot, cs.data(),
            neox ? ops::RopePairing::kNeox : ops::RopePairing::kNormal);
  test::expect_close(x, want, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(NormalAndNeox, RopePairingTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "neox" : "normal"; });

// Llama 3.x rope_freqs: pair i's angle divided by factor i (ggml's rope with freq factors).
TEST(RopeOp, FreqFactorsDivideTheAngles) {
  const std::vector<int32_t> pos = {0, 5, 40, 300};
  const int64_t n_heads = 2, hd = 16, n_rot = 16;
  std::vector<float> factors(n_rot / 2);
  for (size_t i = 0; i < factors.size(); ++i) factors[i] = 1.0f + 3.0f * i;  // 1, 4, 7, ...
  auto x = test::random_floats(pos.size() * n_heads * hd, 17);
  const auto want = rope_reference(x, pos, n_heads, hd, n_rot, 500000.0, true, factors.data());
  std::vector<float> cs(pos.size() * n_rot);
  ops::rope_cos_sin(pos.data(), pos.size(), n_rot, 500000.0f, cs.data(), factors.data());
  ops::rope(test::scalar_f32_test_kernels(), x.data(), pos.size(), n_heads, hd, n_rot, cs.data(),
            ops::RopePairing::kNeox);
  test::expect_close(x, want, 1e-4);  // float theta at position 300
}

// The op binds its optional freq_factors weight and passes it on; without it the angles are
// the plain ones.
TEST(RopeOp, BoundOpReadsTheFreqFactorsSlot) {
  const ops::OpSchema* op = ops::find_op("rope");
  ASSERT_NE(op, nullptr);
  const std::vector<int32_t> pos = {3, 9};
  const int64_t hd = 8, n_heads = 2, n_rot = 8, row = hd * n_heads;
  const std::vector<float> factors = {1.0f, 2.0f, 8.0f, 0.5f};
  const auto x = test::random_floats(pos.size() * row, 5);
  for (const float* f : {factors.data(), static_cast<const float*>(nullptr)}) {
    test::OpCase c{"rope",
                   {ops::Shape{{row, ops::kTokenDim}}, ops::Shape{{ops::kTokenDim}}},
                   {},
                   {},
                   {{"head_dim", hd}, {"n_rot", n_rot}, {"base", 10000.0}, {"mode", std::string("neox")}}};
    if (f) {
      c.weights = {ops::Shape{{n_rot / 2}}};
      c.weight_data = {factors};
    }
    const auto y = test::run_op(c, {x, test::i32_input(pos)}, static_cast<int64_t>(pos.size()));
    test::expect_close(y, rope_reference(x, pos, n_heads, hd, n_rot, 10000.0, true, f), 1e-5);
  }
}

// The shape rule checks the factors' length against n_rot / 2 and names both.
TEST(RopeOp, FreqFactorsLengthIsHalfOfNRot) {
  const ops::OpSchema* op = ops::find_op("rope");
  ASSERT_NE(op, nullptr);
  const ops::Shape x{{128, ops::kTokenDim}}, pos{{ops::kTokenDim}};
  ops::Attrs attrs;
  attrs.set("head_dim", int64_t{64});
  attrs.set("n_rot", int64_t{48});
  attrs.set("base", 10000.0);
  attrs.set("mode", std::string("neox"));
  auto shape_error = [&](int64_t n_factors) {
    const ops::Shape f{{n_factors}};
    ops::ShapeQuery q;
    q.inputs = {&x, &pos};
    q.input_names = {"q", "positions"};
    q.weights = {&f};
    q.weight_names = {"rope_freqs.weight"};
    q.attrs = &attrs;
    std::vector<ops::Shape> out;
    return op->shape(q, &out);
  };
  EXPECT_EQ(shape_error(24), "");
  EXPECT_EQ(shape_error(32),
            "expected freq_factors of shape [24] (n_rot / 2, n_rot 48), found weight "
            "'rope_freqs.weight' [32]");
}

// phi3: neox rotation of the first n_rot = 48 of head_dim 64, pairs (i, i + 24); components
// 48..63 are copied bit for bit.
TEST(RopeOp, PartialRotaryNeoxLeavesTheTailUnchanged) {
  const std::vector<int32_t> pos = {0, 1, 33, 47};
  const int64_t n_heads = 4, hd = 64, n_rot = 48;
  const auto x0 = test::random_floats(pos.size() * n_heads * hd, 29);
  auto x = x0;
  const auto want = rope_reference(x, pos, n_heads, hd, n_rot, 10000.0, true);
  std::vector<float> cs(pos.size() * n_rot);
  ops::rope_cos_sin(pos.data(), pos.size(), n_rot, 10000.0f, cs.data());
  ops::rope(test::scalar_f32_test_kernels(), x.data(), pos.size(), n_heads, hd, n_rot, cs.data(),
            ops::RopePairing::kNeox);
  test::expect_close(x, want, 1e-5);
  for (size_t r = 0; r < pos.size() * n_heads; ++r)
    for (int64_t i = n_rot; i < hd; ++i) ASSERT_EQ(x[r * hd + i], x0[r * hd + i]) << r << " " << i;
}

}  // namespace
}  // namespace gguflow
