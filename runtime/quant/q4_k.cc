// Q4_K: 256 elements in 8 sub-blocks of 32; each has a 6-bit scale and 6-bit min (packed in
// 12 bytes, scaled by f16 d and dmin) and 4-bit levels: value = d*sc*q - dmin*m.
// ggml's quantize_row_q4_K_ref: make_qkx2_quants per sub-block with weights rms(x) + |x|,
// scales and mins quantized to 6 bits, levels recomputed.
#include <algorithm>
#include <cmath>

#include "runtime/quant/formats.h"
#include "runtime/quant/k_quant_helpers.h"

namespace gguflow::quant {

void quantize_row_q4_K(const float* x, block_q4_K* y, int64_t n) {
  constexpr int QK = GGUFLOW_QK_K;
  const int64_t nb = n / QK;
  uint8_t L[QK];  // levels 0..15 of the super-block
  uint8_t Laux[32];
  float weights[32];
  float mins[QK / 32];
  float scales[QK / 32];

  for (int64_t i = 0; i < nb; i++) {
    float max_scale = 0;
    float max_min = 0;
    for (int j = 0; j < QK / 32; ++j) {
      float sum_x2 = 0;
      for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
      float av_x = std::sqrt(sum_x2 / 32);
      for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
      scales[j] = make_qkx2_quants(32, 15, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, -1.f,
                                   0.1f, 20, false);
      if (scales[j] > max_scale) max_scale = scales[j];
      if (mins[j] > max_min) max_min = mins[j];
    }

    float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
    float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
    for (int j = 0; j < QK / 32; ++j) {
      uint8_t ls = static_cast<uint8_t>(nearest_int(inv_scale * scales[j]));
      uint8_t lm = static_cast<uint8_t>(nearest_int(inv_min * mins[j]));
      ls = std::min<uint8_t>(63, ls);
      lm = std::min<uint8_t>(63, lm);
      set_scale_min_k4(j, ls, lm, y[i].scales);
    }
    y[i].d = gguflow_f32_to_fp16(max_scale / 63.f);
    y[i].dmin = gguflow_f32_to_fp16(max_min / 63.f);

    uint8_t sc, m;
    for (int j = 0; j < QK / 32; ++j) {
      get_scale_min_k4(j, y[i].scales, &sc, &m);
      const float d = gguflow_fp16_to_f32(y[i].d) * sc;
      if (!d) continue;
      const float dm = gguflow_fp16_to_f32(y[i].dmin) * m;
      for (int ii = 0; ii < 32; ++ii) {
        int l = nearest_int((x[32 * j + ii] + dm) / d);
        l = std::max(0, std::min(15, l));
        L[32 * j + ii] = static_cast<uint8_t>(l);
      }
    }

    // Each 32 bytes hold 64 elements: low nibbles the first 32, high nibbles the next 32.
    uint8_t* q = y[i].qs;
    for (int j = 0; j < QK; j += 64) {
      for (int l = 0; l < 32; ++l) q[l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
      q += 32;
    }
    x += QK;
  }
}

void dequantize_row_q4_K(const block_q4_K* x, float* y, int64_t n) {
  constexpr int QK = GGUFLOW_QK_K;
  const int64_t nb = n / QK;
  for (int64_t i = 0; i < nb; i++) {
    const uint8_t* q = x[i].qs;
    const float d = gguflow_fp16_to_f32(x[i].d);
    const float min = gguflow_fp16_to_f32(x[i].dmin);
    int is = 0;
    uint8_t sc, m;
    for (int j = 0; j < QK; j += 64) {
      get_scale_min_k4(is + 0, x[i].scales, &sc, &m);
      const float d1 = d * sc;
      const float m1 = min * m;
      get_scale_min_k4(is + 1, x[i].scales, &sc, &m);
      const float d2 = d * sc;
      const float m2 = min * m;
      for (int l = 0; l < 32; ++l) *y++ = d1 * (q[l] & 0xF) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * (q[l] >> 4) - m2;
      q += 32;
      is += 2;
    }
  }
}

}  // namespace gguflow::quant
