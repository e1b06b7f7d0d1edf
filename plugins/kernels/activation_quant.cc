// Activation quantization, bit-exact with GGML's reference quantizers (quantize_row_q8_0_ref,
// quantize_row_q8_1_ref, quantize_row_q8_K_ref, fp32 -> fp16/bf16 rows): the activation row is
// encoded once and reused for every weight row, which makes the integer dot products possible.
//
// These loops follow GGML's scalar reference on purpose: its rounding (roundf, away from zero;
// nearest_int, half to even) and its operation order define the bits. They cost O(n) per activation row
// against O(n * rows) for the product that follows.
#include <cmath>
#include <cstring>

#include "plugins/kernels/kernels_internal.h"

namespace gguflow::kernels {
namespace {

// GGML's nearest_int: round half to even through the float mantissa (|x| < 2^22).
inline int NearestInt(float x) {
  const float v = x + 12582912.f;
  int32_t i;
  std::memcpy(&i, &v, 4);
  return (i & 0x007fffff) - 0x00400000;
}

// std::roundf (half away from zero) for every float, inline: v - trunc(v) is exact, so the
// comparison with 0.5 decides exactly as roundf does. A libm call per element was ~1-2 % of a
// Q8_0 model's decode; this form also lets the compiler vectorize the loops below.
inline float RoundHalfAwayFromZero(float v) {
  const float t = std::trunc(v);
  return std::fabs(v - t) >= 0.5f ? t + std::copysign(1.0f, v) : t;
}

namespace hn = hwy::HWY_NAMESPACE;
using DF = hn::ScalableTag<float>;

// x: n floats -> n/32 block_q8_0. d = max|x| / 127 (stored as fp16), q = roundf(x / d).
// In vectors of this target's width (32 is a multiple of every width): the same float
// operations per element as the scalar reference (|x|, max, x * id, trunc, the exact
// comparison of x * id - trunc with 0.5), so the same bits; ~10x faster than the scalar loop,
// which was a quarter of an encoder's prefill time.
void QuantizeQ8_0(const float* x, block_q8_0* y, int64_t n) {
  const DF df;
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<int8_t, DF> d8;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const auto half = hn::Set(df, 0.5f), one = hn::Set(df, 1.0f);
  for (int64_t b = 0; b < n / 32; ++b, x += 32) {
    auto vmax = hn::Zero(df);
    for (int64_t j = 0; j < 32; j += lanes) vmax = hn::Max(vmax, hn::Abs(hn::LoadU(df, x + j)));
    const float amax = hn::GetLane(hn::MaxOfLanes(df, vmax));
    const float d = amax / ((1 << 7) - 1);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = gguflow_f32_to_fp16(d);
    const auto vid = hn::Set(df, id);
    for (int64_t j = 0; j < 32; j += lanes) {
      const auto v = hn::Mul(hn::LoadU(df, x + j), vid);
      const auto t = hn::Trunc(v);
      const auto away = hn::Ge(hn::Abs(hn::Sub(v, t)), half);  // RoundHalfAwayFromZero
      const auto r = hn::IfThenElse(away, hn::Add(t, hn::CopySign(one, v)), t);
      hn::StoreU(hn::DemoteTo(d8, hn::ConvertTo(di, r)), d8, y[b].qs + j);
    }
  }
}

// As Q8_0, plus s = fp16(d * sum(q)).
void QuantizeQ8_1(const float* x, block_q8_1* y, int64_t n) {
  for (int64_t b = 0; b < n / 32; ++b, x += 32) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / ((1 << 7) - 1);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = gguflow_f32_to_fp16(d);
    int sum = 0;
    for (int j = 0; j < 16; ++j) {
      const int8_t q0 = static_cast<int8_t>(RoundHalfAwayFromZero(x[j] * id));
      const int8_t q1 = static_cast<int8_t>(RoundHalfAwayFromZero(x[16 + j] * id));
      y[b].qs[j] = q0;
      y[b].qs[16 + j] = q1;
      sum += q0 + q1;
    }
    y[b].s = gguflow_f32_to_fp16(static_cast<float>(sum) * d);
  }
}

// x: 256 floats -> one block_q8_K, GGML's scalar reference loop. The scale comes from the
// element of largest magnitude (its sign included; the first such element): iscale = -127 / max,
// q = min(127, nearest_int(iscale * x)), d = 1/iscale.
void QuantizeQ8_KBlockScalar(const float* x, block_q8_K& y) {
  float max = 0.0f, amax = 0.0f;
  for (int j = 0; j < 256; ++j) {
    const float ax = std::fabs(x[j]);
    if (ax > amax) {
      amax = ax;
      max = x[j];
    }
  }
  if (amax == 0.0f) {
    y.d = 0.0f;
    std::memset(y.qs, 0, sizeof(y.qs));
    std::memset(y.bsums, 0, sizeof(y.bsums));
    return;
  }
  const float iscale = -127.f / max;
  for (int j = 0; j < 256; ++j) y.qs[j] = static_cast<int8_t>(std::min(127, NearestInt(iscale * x[j])));
  for (int j = 0; j < 16; ++j) {
    int sum = 0;
    for (int i = 0; i < 16; ++i) sum += y.qs[16 * j + i];
    y.bsums[j] = static_cast<int16_t>(sum);
  }
  y.d = 1 / iscale;
}

// x: n floats -> n/256 block_q8_K, in vectors of this target's width: the same float operations
// per element as the scalar reference (|x| and its maximum, NaN never taken, then the first
// element of that magnitude for the signed max; iscale * x; nearest_int through the float
// mantissa), so the same bits. The scalar loop was ~2 cycles an element: a K-quant down
// projection's 4,864-wide input took ~4 % of a decode step of 8 sequences. Blocks whose
// integers could leave int8 (a NaN element, or a maximum so small that iscale overflows) go
// through the scalar loop: the reference wraps such values to int8 where a vector demotion
// would saturate them.
void QuantizeQ8_K(const float* x, block_q8_K* y, int64_t n) {
  const DF df;
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<int8_t, DF> d8;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const auto magic = hn::Set(df, 12582912.f);  // NearestInt's 1.5 * 2^23
  const auto mantissa = hn::Set(di, 0x007fffff), bias = hn::Set(di, 0x00400000), top = hn::Set(di, 127);
  for (int64_t b = 0; b < n / 256; ++b, x += 256) {
    auto vmax = hn::Zero(df), vnan = hn::Zero(df);
    for (int64_t j = 0; j < 256; j += lanes) {
      const auto v = hn::LoadU(df, x + j), av = hn::Abs(v);
      vmax = hn::IfThenElse(hn::Gt(av, vmax), av, vmax);  // the scalar loop's ax > amax
      vnan = hn::Or(vnan, hn::VecFromMask(df, hn::IsNaN(v)));
    }
    const float amax = hn::GetLane(hn::MaxOfLanes(df, vmax));
    int at = 0;
    while (at < 256 && std::fabs(x[at]) != amax) ++at;
    const float iscale = at < 256 ? -127.f / x[at] : 0.0f;
    if (at == 256 || amax == 0.0f || !std::isfinite(iscale) || !hn::AllFalse(df, hn::MaskFromVec(vnan))) {
      QuantizeQ8_KBlockScalar(x, y[b]);
      continue;
    }
    const auto vs = hn::Set(df, iscale);
    for (int64_t j = 0; j < 256; j += lanes) {
      const auto shifted = hn::BitCast(di, hn::Add(hn::Mul(vs, hn::LoadU(df, x + j)), magic));
      const auto q = hn::Min(hn::Sub(hn::And(shifted, mantissa), bias), top);
      hn::StoreU(hn::DemoteTo(d8, q), d8, y[b].qs + j);
    }
    for (int j = 0; j < 16; ++j) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) sum += y[b].qs[16 * j + i];
      y[b].bsums[j] = static_cast<int16_t>(sum);
    }
    y[b].d = 1 / iscale;
  }
}

}  // namespace

void QuantizeActivations(uint32_t act_type, const float* x, void* dst, int64_t n) {
  switch (act_type) {
    case GGML_TYPE_F32:
      std::memcpy(dst, x, static_cast<size_t>(n) * sizeof(float));
      break;
    case GGML_TYPE_F16: {
      auto* y = static_cast<gguflow_fp16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) y[i] = gguflow_f32_to_fp16(x[i]);
      break;
    }
    case GGML_TYPE_BF16: {
      auto* y = static_cast<gguflow_bf16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) y[i] = gguflow_f32_to_bf16(x[i]);
      break;
    }
    case GGML_TYPE_Q8_0: QuantizeQ8_0(x, static_cast<block_q8_0*>(dst), n); break;
    case GGML_TYPE_Q8_1: QuantizeQ8_1(x, static_cast<block_q8_1*>(dst), n); break;
    case GGML_TYPE_Q8_K: QuantizeQ8_K(x, static_cast<block_q8_K*>(dst), n); break;
    default: break;  // the host only passes act_type values from the table
  }
}

}  // namespace gguflow::kernels
