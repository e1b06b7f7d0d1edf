// Q2_K: 256 elements in 16 sub-blocks of 16; each sub-block has a 4-bit scale and 4-bit min
// (scaled by the block's f16 d and dmin) and 2-bit levels: value = d*sc*q - dmin*m.
// ggml's quantize_row_q2_K_ref: per sub-block, make_qkx2_quants with |x| weights and a
// mean-absolute-error criterion; then scales/mins quantized to 4 bits and levels recomputed.
#include <cmath>

#include "runtime/quant/formats.h"
#include "runtime/quant/k_quant_helpers.h"

namespace gguflow::quant {

void quantize_row_q2_K(const float* x, block_q2_K* y, int64_t n) {
  constexpr int QK = GGUFLOW_QK_K;
  const int64_t nb = n / QK;
  uint8_t L[QK];           // levels 0..3 of the super-block
  uint8_t Laux[16];        // scratch of make_qkx2_quants
  float weights[16];
  float mins[QK / 16];     // per sub-block min (positive = subtracted)
  float scales[QK / 16];   // per sub-block scale
  const float q4scale = 15.f;

  for (int64_t i = 0; i < nb; i++) {
    float max_scale = 0;  // scales are non-negative since the min is subtracted
    float max_min = 0;
    for (int j = 0; j < QK / 16; ++j) {
      for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
      scales[j] = make_qkx2_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux, -0.5f,
                                   0.1f, 15, true);
      if (scales[j] > max_scale) max_scale = scales[j];
      if (mins[j] > max_min) max_min = mins[j];
    }

    if (max_scale > 0) {
      float iscale = q4scale / max_scale;
      for (int j = 0; j < QK / 16; ++j) {
        int l = nearest_int(iscale * scales[j]);
        y[i].scales[j] = static_cast<uint8_t>(l);
      }
      y[i].d = gguflow_f32_to_fp16(max_scale / q4scale);
    } else {
      for (int j = 0; j < QK / 16; ++j) y[i].scales[j] = 0;
      y[i].d = gguflow_f32_to_fp16(0.f);
    }
    if (max_min > 0) {
      float iscale = q4scale / max_min;
      for (int j = 0; j < QK / 16; ++j) {
        int l = nearest_int(iscale * mins[j]);
        y[i].scales[j] = static_cast<uint8_t>(y[i].scales[j] | (l << 4));
      }
      y[i].dmin = gguflow_f32_to_fp16(max_min / q4scale);
    } else {
      y[i].dmin = gguflow_f32_to_fp16(0.f);
    }
    // Recompute the levels against the quantized scales and mins.
    for (int j = 0; j < QK / 16; ++j) {
      const float d = gguflow_fp16_to_f32(y[i].d) * (y[i].scales[j] & 0xF);
      if (!d) continue;
      const float dm = gguflow_fp16_to_f32(y[i].dmin) * (y[i].scales[j] >> 4);
      for (int ii = 0; ii < 16; ++ii) {
        int l = nearest_int((x[16 * j + ii] + dm) / d);
        l = l < 0 ? 0 : (l > 3 ? 3 : l);
        L[16 * j + ii] = static_cast<uint8_t>(l);
      }
    }
    // Byte l of each 32-byte half holds elements l, l+32, l+64, l+96 of its 128.
    for (int j = 0; j < QK; j += 128) {
      for (int l = 0; l < 32; ++l) {
        y[i].qs[j / 4 + l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 2) |
                                                  (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
      }
    }
    x += QK;
  }
}

void dequantize_row_q2_K(const block_q2_K* x, float* y, int64_t n) {
  constexpr int QK = GGUFLOW_QK_K;
  const int64_t nb = n / QK;
  for (int64_t i = 0; i < nb; i++) {
    const float d = gguflow_fp16_to_f32(x[i].d);
    const float min = gguflow_fp16_to_f32(x[i].dmin);
    const uint8_t* q = x[i].qs;
    int is = 0;
    for (int n128 = 0; n128 < QK; n128 += 128) {
      int shift = 0;
      for (int j = 0; j < 4; ++j) {
        uint8_t sc = x[i].scales[is++];
        float dl = d * (sc & 0xF);
        float ml = min * (sc >> 4);
        for (int l = 0; l < 16; ++l) *y++ = dl * static_cast<int8_t>((q[l] >> shift) & 3) - ml;
        sc = x[i].scales[is++];
        dl = d * (sc & 0xF);
        ml = min * (sc >> 4);
        for (int l = 0; l < 16; ++l) *y++ = dl * static_cast<int8_t>((q[l + 16] >> shift) & 3) - ml;
        shift += 2;
      }
      q += 32;
    }
  }
}

}  // namespace gguflow::quant
