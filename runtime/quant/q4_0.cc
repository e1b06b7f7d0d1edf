// Q4_0: 32 elements as 4-bit q with one f16 scale; value = d * (q - 8).
// The scale maps the element of largest magnitude to -8 (its sign kept), so that extreme is
// represented exactly (ggml's quantize_row_q4_0_ref).
#include <algorithm>
#include <cmath>

#include "runtime/quant/formats.h"

namespace gguflow::quant {

void quantize_row_q4_0(const float* x, block_q4_0* y, int64_t n) {
  constexpr int qk = GGUFLOW_QK4_0;
  const int64_t nb = n / qk;
  for (int64_t i = 0; i < nb; i++) {
    float amax = 0.0f;  // absolute max
    float max = 0.0f;   // the signed value with that magnitude
    for (int j = 0; j < qk; j++) {
      const float v = x[i * qk + j];
      if (amax < std::fabs(v)) {
        amax = std::fabs(v);
        max = v;
      }
    }
    const float d = max / -8;
    const float id = d ? 1.0f / d : 0.0f;
    y[i].d = gguflow_f32_to_fp16(d);
    for (int j = 0; j < qk / 2; ++j) {
      const float x0 = x[i * qk + 0 + j] * id;
      const float x1 = x[i * qk + qk / 2 + j] * id;
      // Truncation of (v + 8.5) rounds half up within the 0..16 range.
      const uint8_t xi0 = static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>(x0 + 8.5f))));
      const uint8_t xi1 = static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>(x1 + 8.5f))));
      y[i].qs[j] = static_cast<uint8_t>(xi0 | (xi1 << 4));
    }
  }
}

void dequantize_row_q4_0(const block_q4_0* x, float* y, int64_t n) {
  constexpr int qk = GGUFLOW_QK4_0;
  const int64_t nb = n / qk;
  for (int64_t i = 0; i < nb; i++) {
    const float d = gguflow_fp16_to_f32(x[i].d);
    for (int j = 0; j < qk / 2; ++j) {
      const int x0 = (x[i].qs[j] & 0x0F) - 8;
      const int x1 = (x[i].qs[j] >> 4) - 8;
      y[i * qk + j + 0] = x0 * d;
      y[i * qk + j + qk / 2] = x1 * d;
    }
  }
}

}  // namespace gguflow::quant
