// Q5_0: 32 elements as 5-bit q (low nibbles in qs, 5th bits in the u32 qh) with one f16
// scale; value = d * (q - 16). Scale choice as Q4_0 with -16 (ggml's quantize_row_q5_0_ref).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/quant/formats.h"

namespace gguflow::quant {

void quantize_row_q5_0(const float* x, block_q5_0* y, int64_t n) {
  constexpr int qk = GGUFLOW_QK5_0;
  const int64_t nb = n / qk;
  for (int64_t i = 0; i < nb; i++) {
    float amax = 0.0f;
    float max = 0.0f;
    for (int j = 0; j < qk; j++) {
      const float v = x[i * qk + j];
      if (amax < std::fabs(v)) {
        amax = std::fabs(v);
        max = v;
      }
    }
    const float d = max / -16;
    const float id = d ? 1.0f / d : 0.0f;
    y[i].d = gguflow_f32_to_fp16(d);
    uint32_t qh = 0;
    for (int j = 0; j < qk / 2; ++j) {
      const float x0 = x[i * qk + 0 + j] * id;
      const float x1 = x[i * qk + qk / 2 + j] * id;
      const uint8_t xi0 = static_cast<uint8_t>(std::min(31, static_cast<int>(static_cast<int8_t>(x0 + 16.5f))));
      const uint8_t xi1 = static_cast<uint8_t>(std::min(31, static_cast<int>(static_cast<int8_t>(x1 + 16.5f))));
      y[i].qs[j] = static_cast<uint8_t>((xi0 & 0x0F) | ((xi1 & 0x0F) << 4));
      qh |= ((xi0 & 0x10u) >> 4) << (j + 0);
      qh |= ((xi1 & 0x10u) >> 4) << (j + qk / 2);
    }
    std::memcpy(y[i].qh, &qh, sizeof(qh));
  }
}

void dequantize_row_q5_0(const block_q5_0* x, float* y, int64_t n) {
  constexpr int qk = GGUFLOW_QK5_0;
  const int64_t nb = n / qk;
  for (int64_t i = 0; i < nb; i++) {
    const float d = gguflow_fp16_to_f32(x[i].d);
    uint32_t qh;
    std::memcpy(&qh, x[i].qh, sizeof(qh));
    for (int j = 0; j < qk / 2; ++j) {
      const uint8_t xh_0 = ((qh >> (j + 0)) << 4) & 0x10;
      const uint8_t xh_1 = ((qh >> (j + 12))) & 0x10;
      const int32_t x0 = ((x[i].qs[j] & 0x0F) | xh_0) - 16;
      const int32_t x1 = ((x[i].qs[j] >> 4) | xh_1) - 16;
      y[i * qk + j + 0] = x0 * d;
      y[i * qk + j + qk / 2] = x1 * d;
    }
  }
}

}  // namespace gguflow::quant
