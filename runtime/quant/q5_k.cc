// Q5_K: as Q4_K with 5-bit levels; the 5th bit of element (64 k + j) is bit 2k of qh[j]
// (first 32 of each 64) or bit 2k+1 (second 32). value = d*sc*q - dmin*m.
// ggml's quantize_row_q5_K_ref (make_qkx2_quants with nmax 31, 16 candidate scales).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/quant/formats.h"
#include "runtime/quant/k_quant_helpers.h"

namespace gguflow::quant {

void quantize_row_q5_K(const float* x, block_q5_K* y, int64_t n) {
  constexpr int QK = GGUFLOW_QK_K;
  const int64_t nb = n / QK;
  uint8_t L[QK];  // levels 0..31 of the super-block

  for (int64_t i = 0; i < nb; i++) {
    quantize_k4_scales_and_levels(x, 31, -0.5f, 15, y[i].scales, &y[i].d, &y[i].dmin, L);

    uint8_t* qh = y[i].qh;
    uint8_t* ql = y[i].qs;
    std::memset(qh, 0, QK / 8);
    uint8_t m1 = 1, m2 = 2;
    for (int n64 = 0; n64 < QK; n64 += 64) {
      for (int j = 0; j < 32; ++j) {
        int l1 = L[n64 + j];
        if (l1 > 15) {
          l1 -= 16;
          qh[j] |= m1;
        }
        int l2 = L[n64 + j + 32];
        if (l2 > 15) {
          l2 -= 16;
          qh[j] |= m2;
        }
        ql[j] = static_cast<uint8_t>(l1 | (l2 << 4));
      }
      m1 = static_cast<uint8_t>(m1 << 2);
      m2 = static_cast<uint8_t>(m2 << 2);
      ql += 32;
    }
    x += QK;
  }
}

void dequantize_row_q5_K(const block_q5_K* x, float* y, int64_t n) {
  constexpr int QK = GGUFLOW_QK_K;
  const int64_t nb = n / QK;
  for (int64_t i = 0; i < nb; i++) {
    const uint8_t* ql = x[i].qs;
    const uint8_t* qh = x[i].qh;
    const float d = gguflow_fp16_to_f32(x[i].d);
    const float min = gguflow_fp16_to_f32(x[i].dmin);
    int is = 0;
    uint8_t sc, m;
    uint8_t u1 = 1, u2 = 2;
    for (int j = 0; j < QK; j += 64) {
      get_scale_min_k4(is + 0, x[i].scales, &sc, &m);
      const float d1 = d * sc;
      const float m1 = min * m;
      get_scale_min_k4(is + 1, x[i].scales, &sc, &m);
      const float d2 = d * sc;
      const float m2 = min * m;
      for (int l = 0; l < 32; ++l) *y++ = d1 * ((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * ((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
      ql += 32;
      is += 2;
      u1 = static_cast<uint8_t>(u1 << 2);
      u2 = static_cast<uint8_t>(u2 << 2);
    }
  }
}

}  // namespace gguflow::quant
