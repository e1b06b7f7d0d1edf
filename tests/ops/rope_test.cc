#include "ops/rope.h"

#include <gtest/gtest.h>

#include "tests/ops/op_test_util.h"
#include "tests/ops/test_kernels.h"

namespace gguflow {
namespace {

// theta_i = pos * base^(-2i/n_rot), in double.
double theta(int32_t pos, int64_t i, int64_t n_rot, double base) {
  return pos * std::pow(base, -2.0 * i / n_rot);
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
                                   bool neox) {
  std::vector<double> y(x.begin(), x.end());
  for (size_t t = 0; t < pos.size(); ++t)
    for (int64_t h = 0; h < n_heads; ++h) {
      double* v = y.data() + (t * n_heads + h) * hd;
      for (int64_t i = 0; i < n_rot / 2; ++i) {
        const int64_t i0 = neox ? i : 2 * i, i1 = neox ? i + n_rot / 2 : 2 * i + 1;
        const double th = theta(pos[t], i, n_rot, base), a = v[i0], b = v[i1];
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

}  // namespace
}  // namespace gguflow
