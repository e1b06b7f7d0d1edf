// The gelu and gelu_mul ops (tanh approximation and erf), on plain buffers and through their
// units: both share ops/gelu.h's numerics and one `approx` attribute.
#include "ops/gelu.h"
#include "ops/gelu_mul.h"

#include <cmath>
#include <numbers>

#include <gtest/gtest.h>

#include "ops/error.h"
#include "tests/ops/op_harness.h"
#include "tests/ops/test_kernels.h"
#include "tests/ops/op_test_util.h"

namespace gguflow {
namespace {

using ops::GeluApprox;
using ops::kTokenDim;

double gelu_ref(double x, GeluApprox approx) {
  if (approx == GeluApprox::kErf) return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  const double c = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
}

// FFN gate pre-activations: N(0, 2), a few large ones (both tails saturate), and fixed points.
std::vector<float> gates(size_t n, uint32_t seed) {
  auto x = test::random_floats(n, seed, 0.0f, 2.0f);
  for (float v : {0.0f, 1.0f, -1.0f, 3.0f, -3.0f, 6.0f, -6.0f, 12.0f, -12.0f, 80.0f, -80.0f,
                  1e4f, -1e4f})
    x.push_back(v);
  return x;
}

// Float tanh/erf near their saturation: 1 + tanh(z) cancels for z << 0, which the absolute
// tolerance covers (|y| < 1e-2 there); elsewhere a few ulps.
constexpr double kAbs = 2e-6, kRel = 2e-6;

TEST(GeluOp, MatchesDoubleReferencesForBothApproximations) {
  const auto x = gates(1000, 41);
  for (GeluApprox approx : {GeluApprox::kTanh, GeluApprox::kErf}) {
    SCOPED_TRACE(approx == GeluApprox::kTanh ? "tanh" : "erf");
    std::vector<float> y(x.size());
    ops::gelu(test::scalar_f32_test_kernels(), x.data(), y.data(), static_cast<int64_t>(x.size()), approx);
    std::vector<double> want(x.size());
    for (size_t i = 0; i < x.size(); ++i) want[i] = gelu_ref(x[i], approx);
    test::expect_close(y, want, kAbs, kRel);
  }
  // The two differ by up to ~1e-3 around |x| ~ 2: a test that swapped them would fail.
  EXPECT_GT(std::fabs(gelu_ref(-2.3, GeluApprox::kTanh) - gelu_ref(-2.3, GeluApprox::kErf)), 1e-4);
}

TEST(GeluMulOp, IsGeluOfGateTimesUp) {
  const auto gate = gates(700, 42);
  const auto up = test::random_floats(gate.size(), 43, 0.0f, 3.0f);
  for (GeluApprox approx : {GeluApprox::kTanh, GeluApprox::kErf}) {
    std::vector<float> y(gate.size());
    ops::gelu_mul(test::scalar_f32_test_kernels(), gate.data(), up.data(), y.data(), static_cast<int64_t>(y.size()), approx);
    std::vector<double> want(y.size());
    for (size_t i = 0; i < y.size(); ++i) want[i] = gelu_ref(gate[i], approx) * up[i];
    test::expect_close(y, want, 4 * kAbs, kRel);
  }
}

TEST(GeluOp, BindsApproxDefaultingToTanh) {
  const int64_t n = 16, T = 3;
  const auto x = gates(n * T - 13, 44);
  auto run = [&](const char* op, std::vector<std::pair<std::string, ops::AttrValue>> attrs,
                 std::vector<std::vector<float>> in) {
    test::OpCase c{op, {}, {}, {}, std::move(attrs)};
    c.inputs.assign(in.size(), ops::Shape{{n, kTokenDim}});
    return test::run_op(c, in, T);
  };
  for (const char* name : {"", "tanh", "erf"}) {
    SCOPED_TRACE(name);
    const GeluApprox approx = std::string(name) == "erf" ? GeluApprox::kErf : GeluApprox::kTanh;
    std::vector<std::pair<std::string, ops::AttrValue>> attrs;
    if (*name) attrs.push_back({"approx", std::string(name)});
    std::vector<double> want(x.size()), want_mul(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      want[i] = gelu_ref(x[i], approx);
      want_mul[i] = want[i] * x[x.size() - 1 - i];
    }
    test::expect_close(run("gelu", attrs, {x}), want, kAbs, kRel);
    const std::vector<float> up(x.rbegin(), x.rend());
    test::expect_close(run("gelu_mul", attrs, {x, up}), want_mul, 1e-4, kRel);
  }
  try {
    run("gelu", {{"approx", std::string("quick")}}, {x});
    FAIL() << "an unknown approx binds";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "attribute 'approx' 'quick' is not one of tanh, erf");
  }
}

TEST(GeluMulOp, ShapeRuleWantsEqualShapes) {
  test::OpCase c{"gelu_mul", {{{64, kTokenDim}}, {{32, kTokenDim}}}, {}, {}, {}};
  EXPECT_EQ(test::shape_message(c),
            "expected equal shapes, found input 'gate' [64, T] and input 'up' [32, T]");
  c = {"gelu", {{{64}}}, {}, {}, {}};
  EXPECT_EQ(test::shape_message(c), "expected input of rank 2, found input 'x' [64]");
}

}  // namespace
}  // namespace gguflow
