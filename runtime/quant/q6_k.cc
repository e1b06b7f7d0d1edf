// Q6_K: 256 elements in 16 sub-blocks of 16 with int8 scales (times the f16 d) and 6-bit
// levels (4 low bits in ql, 2 high bits in qh): value = d*sc*(q-32).
// ggml's quantize_row_q6_K_ref: make_qx_quants (x^2-weighted search) per sub-block, scales
// quantized to int8 against the largest one, levels recomputed.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/quant/formats.h"
#include "runtime/quant/k_quant_helpers.h"

namespace gguflow::quant {

void quantize_row_q6_K(const float* x, block_q6_K* y, int64_t n) {
  constexpr int QK = GGUFLOW_QK_K;
  const int64_t nb = n / QK;
  int8_t L[QK];  // levels 0..63 of the super-block
  float scales[QK / 16];

  for (int64_t i = 0; i < nb; i++) {
    float max_scale = 0;
    float max_abs_scale = 0;
    for (int ib = 0; ib < QK / 16; ++ib) {
      const float scale = make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib, 1, nullptr);
      scales[ib] = scale;
      const float abs_scale = std::fabs(scale);
      if (abs_scale > max_abs_scale) {
        max_abs_scale = abs_scale;
        max_scale = scale;
      }
    }

    if (max_abs_scale < kGroupMaxEps) {  // all (near) zero: an all-zero block
      std::memset(&y[i], 0, sizeof(block_q6_K));
      y[i].d = gguflow_f32_to_fp16(0.f);
      x += QK;
      continue;
    }

    float iscale = -128.f / max_scale;
    y[i].d = gguflow_f32_to_fp16(1 / iscale);
    for (int ib = 0; ib < QK / 16; ++ib) {
      y[i].scales[ib] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[ib])));
    }

    for (int j = 0; j < QK / 16; ++j) {
      float d = gguflow_fp16_to_f32(y[i].d) * y[i].scales[j];
      if (!d) continue;
      for (int ii = 0; ii < 16; ++ii) {
        int l = nearest_int(x[16 * j + ii] / d);
        l = std::max(-32, std::min(31, l));
        L[16 * j + ii] = static_cast<int8_t>(l + 32);
      }
    }

    // Per 128 elements: ql[l] = low nibbles of l and l+64, ql[l+32] of l+32 and l+96;
    // qh[l] = the high 2 bits of l, l+32, l+64, l+96.
    uint8_t* ql = y[i].ql;
    uint8_t* qh = y[i].qh;
    for (int j = 0; j < QK; j += 128) {
      for (int l = 0; l < 32; ++l) {
        const uint8_t q1 = L[j + l + 0] & 0xF;
        const uint8_t q2 = L[j + l + 32] & 0xF;
        const uint8_t q3 = L[j + l + 64] & 0xF;
        const uint8_t q4 = L[j + l + 96] & 0xF;
        ql[l + 0] = static_cast<uint8_t>(q1 | (q3 << 4));
        ql[l + 32] = static_cast<uint8_t>(q2 | (q4 << 4));
        qh[l] = static_cast<uint8_t>((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) |
                                     ((L[j + l + 64] >> 4) << 4) | ((L[j + l + 96] >> 4) << 6));
      }
      ql += 64;
      qh += 32;
    }
    x += QK;
  }
}

void dequantize_row_q6_K(const block_q6_K* x, float* y, int64_t n) {
  constexpr int QK = GGUFLOW_QK_K;
  const int64_t nb = n / QK;
  for (int64_t i = 0; i < nb; i++) {
    const float d = gguflow_fp16_to_f32(x[i].d);
    const uint8_t* ql = x[i].ql;
    const uint8_t* qh = x[i].qh;
    const int8_t* sc = x[i].scales;
    for (int n128 = 0; n128 < QK; n128 += 128) {
      for (int l = 0; l < 32; ++l) {
        int is = l / 16;
        const int8_t q1 = static_cast<int8_t>(((ql[l + 0] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32);
        const int8_t q2 = static_cast<int8_t>(((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32);
        const int8_t q3 = static_cast<int8_t>(((ql[l + 0] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
        const int8_t q4 = static_cast<int8_t>(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
        y[l + 0] = d * sc[is + 0] * q1;
        y[l + 32] = d * sc[is + 2] * q2;
        y[l + 64] = d * sc[is + 4] * q3;
        y[l + 96] = d * sc[is + 6] * q4;
      }
      y += 128;
      ql += 64;
      qh += 32;
      sc += 8;
    }
  }
}

}  // namespace gguflow::quant
