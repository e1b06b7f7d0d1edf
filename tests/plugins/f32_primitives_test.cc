// The f32 primitives of every plugin this CPU runs, against double-precision loops, for
// lengths 1..67 (every tail length of every vector width). Tolerances: a few float ulps of the
// magnitude of the terms (sum |a_i b_i| for reductions), as the order of float additions may
// differ from the double reference.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/plugins/plugin_test_util.h"

namespace gguflow::test {
namespace {

constexpr double kUlp = 1.0 / (1 << 23);

std::vector<float> random_vector(int64_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

class F32Primitives : public ::testing::TestWithParam<std::string> {};

TEST_P(F32Primitives, ElementwiseAndReductions) {
  const GguflowKernels& k = plugin_table(GetParam());
  for (int64_t n = 1; n <= 67; ++n) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto a = random_vector(n, 1 + n), b = random_vector(n, 100 + n);
    double dot = 0.0, mag = 0.0;
    for (int64_t i = 0; i < n; ++i) dot += double(a[i]) * b[i], mag += std::fabs(double(a[i]) * b[i]);
    EXPECT_NEAR(k.dot_f32(a.data(), b.data(), n), dot, 2 * n * kUlp * mag);

    std::vector<float> y = b;
    k.axpy_f32(0.75f, a.data(), y.data(), n);
    for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(y[i], 0.75 * a[i] + b[i], 2 * kUlp * (std::fabs(a[i]) + std::fabs(b[i])));
    y = a;
    k.scale_f32(-3.0f, y.data(), n);
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(y[i], -3.0f * a[i]);
    k.add_f32(a.data(), b.data(), y.data(), n);
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(y[i], a[i] + b[i]);
    k.mul_f32(a.data(), b.data(), y.data(), n);
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(y[i], a[i] * b[i]);

    // rmsnorm with and without gain.
    double ss = 0.0;
    for (float v : a) ss += double(v) * v;
    const double inv = 1.0 / std::sqrt(ss / n + 1e-5);
    k.rmsnorm_f32(a.data(), b.data(), y.data(), n, 1e-5f);
    for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(y[i], a[i] * inv * b[i], 4 * kUlp * std::fabs(a[i] * inv * b[i]) + 1e-30);
    k.rmsnorm_f32(a.data(), nullptr, y.data(), n, 1e-5f);
    for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(y[i], a[i] * inv, 4 * kUlp * std::fabs(a[i] * inv) + 1e-30);

    // softmax of values up to +-30 (exp range that would overflow without the max shift).
    std::vector<float> s = random_vector(n, 7 + n, 10.0f);
    const std::vector<float> s0 = s;
    double mx = s0[0];
    for (float v : s0) mx = std::max<double>(mx, v);
    double total = 0.0;
    for (float v : s0) total += std::exp(double(v) - mx);
    const float returned = k.softmax_f32(s.data(), n);
    EXPECT_NEAR(returned, total, 8 * kUlp * total);
    for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(s[i], std::exp(double(s0[i]) - mx) / total, 8 * kUlp);

    // The tanh GELU, over gates up to +-12 (saturation both ways): 1 + tanh(z) cancels for
    // z << 0, which the absolute term covers.
    const std::vector<float> g = random_vector(n, 31 + n, 4.0f);
    k.gelu_tanh_f32(g.data(), y.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const double v = g[i];
      const double expect = 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
      EXPECT_NEAR(y[i], expect, 2e-6 + 16 * kUlp * std::fabs(expect)) << "gelu of " << v;
    }

    // silu(gate) * up.
    k.silu_mul_f32(a.data(), b.data(), y.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const double expect = a[i] / (1.0 + std::exp(-double(a[i]))) * b[i];
      EXPECT_NEAR(y[i], expect, 8 * kUlp * std::fabs(expect) + 1e-30);
    }
  }
}

TEST_P(F32Primitives, RopeRotatesNormAndNeoxPairs) {
  const GguflowKernels& k = plugin_table(GetParam());
  constexpr int64_t kRot = 16;
  const auto x0 = random_vector(kRot + 4, 5);
  std::vector<float> cs(kRot);
  for (int64_t i = 0; i < kRot / 2; ++i) {
    const double theta = 7.0 * std::pow(10000.0, -2.0 * i / kRot);
    cs[2 * i] = static_cast<float>(std::cos(theta));
    cs[2 * i + 1] = static_cast<float>(std::sin(theta));
  }
  for (int neox : {0, 1}) {
    std::vector<float> x = x0;
    k.rope_f32(x.data(), kRot, cs.data(), neox);
    for (int64_t i = 0; i < kRot / 2; ++i) {
      const int64_t i0 = neox ? i : 2 * i, i1 = neox ? i + kRot / 2 : 2 * i + 1;
      const double c = cs[2 * i], s = cs[2 * i + 1];
      EXPECT_NEAR(x[i0], x0[i0] * c - x0[i1] * s, 4 * kUlp * (std::fabs(x0[i0]) + std::fabs(x0[i1])));
      EXPECT_NEAR(x[i1], x0[i0] * s + x0[i1] * c, 4 * kUlp * (std::fabs(x0[i0]) + std::fabs(x0[i1])));
    }
    for (int64_t i = kRot; i < kRot + 4; ++i) EXPECT_EQ(x[i], x0[i]) << "beyond n_rot must stay";
  }
}

INSTANTIATE_TEST_SUITE_P(Plugins, F32Primitives, ::testing::ValuesIn(supported_plugin_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace gguflow::test
