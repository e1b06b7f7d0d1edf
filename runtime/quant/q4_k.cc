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

  for (int64_t i = 0; i < nb; i++) {
    quantize_k4_scales_and_levels(x, 15, -1.f, 20, y[i].scales, &y[i].d, &y[i].dmin, L);

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
