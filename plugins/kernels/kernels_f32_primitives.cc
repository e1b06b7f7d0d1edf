// f32 vector primitives used by ops (dot, axpy, scale, add, mul, rmsnorm, softmax, rope,
// silu*mul), vectorised with Highway for this plugin's target. Tails shorter than a vector are
// done in scalar code. RMSNorm sums squares in double, as GGML does (in eight partial sums).
#include <cmath>

#include <hwy/contrib/math/math-inl.h>

#include "plugins/kernels/kernels_internal.h"
#include "plugins/kernels/dot_f32-inl.h"

namespace gguflow::kernels {
namespace {

namespace hn = hwy::HWY_NAMESPACE;
using DF = hn::ScalableTag<float>;

inline int64_t Lanes() { return static_cast<int64_t>(hn::Lanes(DF())); }

}  // namespace

float DotF32(const float* a, const float* b, int64_t n) {
  float sum;
  DotF32Rows<1>(a, &b, n, &sum);
  return sum;
}

void AxpyF32(float a, const float* x, float* y, int64_t n) {
  const DF df;
  const auto va = hn::Set(df, a);
  int64_t i = 0;
  for (; i + Lanes() <= n; i += Lanes()) hn::StoreU(hn::MulAdd(va, hn::LoadU(df, x + i), hn::LoadU(df, y + i)), df, y + i);
  for (; i < n; ++i) y[i] += a * x[i];
}

void ScaleF32(float a, float* x, int64_t n) {
  const DF df;
  const auto va = hn::Set(df, a);
  int64_t i = 0;
  for (; i + Lanes() <= n; i += Lanes()) hn::StoreU(hn::Mul(va, hn::LoadU(df, x + i)), df, x + i);
  for (; i < n; ++i) x[i] *= a;
}

void AddF32(const float* a, const float* b, float* y, int64_t n) {
  const DF df;
  int64_t i = 0;
  for (; i + Lanes() <= n; i += Lanes()) hn::StoreU(hn::Add(hn::LoadU(df, a + i), hn::LoadU(df, b + i)), df, y + i);
  for (; i < n; ++i) y[i] = a[i] + b[i];
}

void MulF32(const float* a, const float* b, float* y, int64_t n) {
  const DF df;
  int64_t i = 0;
  for (; i + Lanes() <= n; i += Lanes()) hn::StoreU(hn::Mul(hn::LoadU(df, a + i), hn::LoadU(df, b + i)), df, y + i);
  for (; i < n; ++i) y[i] = a[i] * b[i];
}

// Partial sums of RmsNormF32's squares.
constexpr int kSquareSums = 8;

// y = x * (1 / sqrt(mean(x^2) + eps)) * w. The sum of squares is accumulated in double (as
// GGML's ggml_float; a float's square is exact there) in kSquareSums partial sums, element i in
// sum i % kSquareSums, then added in a fixed tree. Why: one chain of additions in element order
// (GGML's, and ours before) took ~1 us for a 896-wide row, a latency chain of 896 dependent
// double adds (a decode step of 8 sequences spent ~7 us in each of its 48 norms); eight chains
// overlap. The order is fixed, not the vector width's, so every plugin gives the same scale;
// it differs from GGML's single chain in the last bits of the sum.
void RmsNormF32(const float* x, const float* w, float* y, int64_t n, float eps) {
  double part[kSquareSums] = {};
  int64_t e = 0;
  for (; e + kSquareSums <= n; e += kSquareSums)
    for (int k = 0; k < kSquareSums; ++k) part[k] += static_cast<double>(x[e + k]) * static_cast<double>(x[e + k]);
  for (int k = 0; e < n; ++e, ++k) part[k] += static_cast<double>(x[e]) * static_cast<double>(x[e]);
  static_assert(kSquareSums == 8, "the tree below adds eight partial sums");
  const double sum = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
  const float mean = static_cast<float>(sum / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(mean + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = w ? (x[i] * scale) * w[i] : x[i] * scale;
}

// In place: x = exp(x - max) / sum. Returns the sum of exp(x - max).
float SoftmaxF32(float* x, int64_t n) {
  if (n <= 0) return 0.0f;
  const DF df;
  // The largest element, a vector of lanes at a time: the maximum of a set does not depend on
  // the order it is taken in, so this is the scalar loop's value (it was a sixth of softmax).
  float max = x[0];
  int64_t m = 0;
  if (n >= Lanes()) {
    auto lanes_max = hn::LoadU(df, x);
    for (m = Lanes(); m + Lanes() <= n; m += Lanes()) lanes_max = hn::Max(lanes_max, hn::LoadU(df, x + m));
    max = hn::GetLane(hn::MaxOfLanes(df, lanes_max));
  }
  for (; m < n; ++m) max = std::max(max, x[m]);
  const auto vmax = hn::Set(df, max);
  double sum = 0.0;
  int64_t i = 0;
  for (; i + Lanes() <= n; i += Lanes()) {
    const auto e = hn::Exp(df, hn::Sub(hn::LoadU(df, x + i), vmax));
    hn::StoreU(e, df, x + i);
    sum += static_cast<double>(hn::GetLane(hn::SumOfLanes(df, e)));
  }
  for (; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += static_cast<double>(x[i]);
  }
  const float total = static_cast<float>(sum);
  ScaleF32(1.0f / total, x, n);
  return total;
}

// Pair i is (x0, x1) = (x[2i], x[2i+1]) (NORM) or (x[i], x[i + n_rot/2]) (NEOX); it becomes
// (x0 cos - x1 sin, x0 sin + x1 cos) with cos_sin[2i], cos_sin[2i+1].
void RopeF32(float* x, int64_t n_rot, const float* cos_sin, int neox) {
  const int64_t half = n_rot / 2;
  for (int64_t i = 0; i < half; ++i) {
    const int64_t i0 = neox ? i : 2 * i;
    const int64_t i1 = neox ? i + half : 2 * i + 1;
    const float c = cos_sin[2 * i], s = cos_sin[2 * i + 1];
    const float x0 = x[i0], x1 = x[i1];
    x[i0] = x0 * c - x1 * s;
    x[i1] = x0 * s + x1 * c;
  }
}

// y = gate / (1 + exp(-gate)) * up.
void SiluMulF32(const float* gate, const float* up, float* y, int64_t n) {
  const DF df;
  const auto one = hn::Set(df, 1.0f);
  int64_t i = 0;
  for (; i + Lanes() <= n; i += Lanes()) {
    const auto g = hn::LoadU(df, gate + i);
    const auto silu = hn::Div(g, hn::Add(one, hn::Exp(df, hn::Neg(g))));
    hn::StoreU(hn::Mul(silu, hn::LoadU(df, up + i)), df, y + i);
  }
  for (; i < n; ++i) y[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

// y = 0.5 x (1 + tanh(c (x + 0.044715 x^3))), c = sqrt(2/pi); Highway's vector Tanh, the
// tail with std::tanh (the same formula, in the same float order).
void GeluTanhF32(const float* x, float* y, int64_t n) {
  constexpr float kSqrt2OverPi = 0.79788456080286535588f;
  constexpr float kCoef = 0.044715f;
  const DF df;
  const auto half = hn::Set(df, 0.5f), one = hn::Set(df, 1.0f);
  const auto c = hn::Set(df, kSqrt2OverPi), coef = hn::Set(df, kCoef);
  int64_t i = 0;
  for (; i + Lanes() <= n; i += Lanes()) {
    const auto v = hn::LoadU(df, x + i);
    const auto inner = hn::Mul(c, hn::Add(v, hn::Mul(hn::Mul(coef, v), hn::Mul(v, v))));
    hn::StoreU(hn::Mul(hn::Mul(half, v), hn::Add(one, hn::Tanh(df, inner))), df, y + i);
  }
  for (; i < n; ++i) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + std::tanh(kSqrt2OverPi * (v + kCoef * v * v * v)));
  }
}

}  // namespace gguflow::kernels
