// Q3_K: 256 elements in 16 sub-blocks of 16 with 6-bit signed scales (stored + 32, packed in
// 12 bytes) and 3-bit levels (2 low bits in qs, high bit in hmask): value = d*(sc-32)*(q-4).
// ggml's quantize_row_q3_K_ref: make_q3_quants per sub-block, scales quantized to 6 bits,
// levels recomputed against the quantized scales.
#include <cmath>
#include <cstring>

#include "runtime/quant/formats.h"
#include "runtime/quant/k_quant_helpers.h"

namespace gguflow::quant {
namespace {

// The 6-bit scale j (0..15) of `scales[12]`, minus the +32 bias.
int8_t q3_k_scale(const uint8_t* scales, int j) {
  int8_t sc = static_cast<int8_t>(j < 8 ? scales[j] & 0xF : scales[j - 8] >> 4);
  return static_cast<int8_t>((sc | (((scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32);
}

}  // namespace

void quantize_row_q3_K(const float* x, block_q3_K* y, int64_t n) {
  constexpr int QK = GGUFLOW_QK_K;
  const int64_t nb = n / QK;
  int8_t L[QK];           // levels 0..7 of the super-block
  float scales[QK / 16];  // signed per sub-block scales

  for (int64_t i = 0; i < nb; i++) {
    float max_scale = 0;
    float amax = 0;
    for (int j = 0; j < QK / 16; ++j) {
      scales[j] = make_q3_quants(16, 4, x + 16 * j, L + 16 * j, true);
      float scale = std::fabs(scales[j]);
      if (scale > amax) {
        amax = scale;
        max_scale = scales[j];
      }
    }

    std::memset(y[i].scales, 0, 12);
    if (max_scale) {
      float iscale = -32.f / max_scale;
      for (int j = 0; j < QK / 16; ++j) {
        int8_t l = static_cast<int8_t>(nearest_int(iscale * scales[j]));
        l = static_cast<int8_t>((l < -32 ? -32 : (l > 31 ? 31 : l)) + 32);
        if (j < 8) {
          y[i].scales[j] = l & 0xF;
        } else {
          y[i].scales[j - 8] = static_cast<uint8_t>(y[i].scales[j - 8] | ((l & 0xF) << 4));
        }
        l = static_cast<int8_t>(l >> 4);
        y[i].scales[j % 4 + 8] = static_cast<uint8_t>(y[i].scales[j % 4 + 8] | (l << (2 * (j / 4))));
      }
      y[i].d = gguflow_f32_to_fp16(1 / iscale);
    } else {
      y[i].d = gguflow_f32_to_fp16(0.f);
    }

    for (int j = 0; j < QK / 16; ++j) {
      const int8_t sc = q3_k_scale(y[i].scales, j);
      float d = gguflow_fp16_to_f32(y[i].d) * sc;
      if (!d) continue;
      for (int ii = 0; ii < 16; ++ii) {
        int l = nearest_int(x[16 * j + ii] / d);
        l = l < -4 ? -4 : (l > 3 ? 3 : l);
        L[16 * j + ii] = static_cast<int8_t>(l + 4);
      }
    }

    // High bit of element j goes to hmask[j % 32], bit j / 32.
    std::memset(y[i].hmask, 0, QK / 8);
    int m = 0;
    uint8_t hm = 1;
    for (int j = 0; j < QK; ++j) {
      if (L[j] > 3) {
        y[i].hmask[m] |= hm;
        L[j] = static_cast<int8_t>(L[j] - 4);
      }
      if (++m == QK / 8) {
        m = 0;
        hm = static_cast<uint8_t>(hm << 1);
      }
    }
    for (int j = 0; j < QK; j += 128) {
      for (int l = 0; l < 32; ++l) {
        y[i].qs[j / 4 + l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 2) |
                                                  (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
      }
    }
    x += QK;
  }
}

void dequantize_row_q3_K(const block_q3_K* x, float* y, int64_t n) {
  constexpr int QK = GGUFLOW_QK_K;
  const int64_t nb = n / QK;
  for (int64_t i = 0; i < nb; i++) {
    const float d_all = gguflow_fp16_to_f32(x[i].d);
    const uint8_t* q = x[i].qs;
    const uint8_t* hm = x[i].hmask;
    uint8_t m = 1;
    int8_t scales[16];
    for (int j = 0; j < 16; ++j) scales[j] = static_cast<int8_t>(q3_k_scale(x[i].scales, j) + 32);
    int is = 0;
    for (int n128 = 0; n128 < QK; n128 += 128) {
      int shift = 0;
      for (int j = 0; j < 4; ++j) {
        float dl = d_all * (scales[is++] - 32);
        for (int l = 0; l < 16; ++l) {
          *y++ = dl * (static_cast<int8_t>((q[l + 0] >> shift) & 3) - ((hm[l + 0] & m) ? 0 : 4));
        }
        dl = d_all * (scales[is++] - 32);
        for (int l = 0; l < 16; ++l) {
          *y++ = dl * (static_cast<int8_t>((q[l + 16] >> shift) & 3) - ((hm[l + 16] & m) ? 0 : 4));
        }
        shift += 2;
        m = static_cast<uint8_t>(m << 1);
      }
      q += 32;
    }
  }
}

}  // namespace gguflow::quant
