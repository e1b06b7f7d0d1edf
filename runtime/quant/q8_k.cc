// Q8_K: the activation format of every k-quant dot product. 256 int8 levels with an f32
// scale d = max / -127 (max = the signed element of largest magnitude) and bsums, the sums of
// each group of 16 levels, which let Q2_K..Q5_K kernels apply their per-sub-block mins.
// ggml's quantize_row_q8_K_ref / dequantize_row_q8_K.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/quant/formats.h"
#include "runtime/quant/k_quant_helpers.h"

namespace gguflow::quant {

void quantize_row_q8_K(const float* x, block_q8_K* y, int64_t n) {
  constexpr int QK = GGUFLOW_QK_K;
  const int64_t nb = n / QK;
  for (int64_t i = 0; i < nb; i++) {
    float max = 0;
    float amax = 0;
    for (int j = 0; j < QK; ++j) {
      float ax = std::fabs(x[j]);
      if (ax > amax) {
        amax = ax;
        max = x[j];
      }
    }
    if (!amax) {
      // GGML leaves bsums untouched here; we define them as zero (the sums of zero levels).
      y[i].d = 0;
      std::memset(y[i].qs, 0, QK);
      std::memset(y[i].bsums, 0, sizeof(y[i].bsums));
      x += QK;
      continue;
    }
    const float iscale = -127.f / max;
    for (int j = 0; j < QK; ++j) {
      int v = nearest_int(iscale * x[j]);
      y[i].qs[j] = static_cast<int8_t>(std::min(127, v));
    }
    for (int j = 0; j < QK / 16; ++j) {
      int sum = 0;
      for (int ii = 0; ii < 16; ++ii) sum += y[i].qs[j * 16 + ii];
      y[i].bsums[j] = static_cast<int16_t>(sum);
    }
    y[i].d = 1 / iscale;
    x += QK;
  }
}

void dequantize_row_q8_K(const block_q8_K* x, float* y, int64_t n) {
  constexpr int QK = GGUFLOW_QK_K;
  const int64_t nb = n / QK;
  for (int64_t i = 0; i < nb; i++) {
    for (int j = 0; j < QK; ++j) *y++ = x[i].d * x[i].qs[j];
  }
}

}  // namespace gguflow::quant
