// Q5_1: 32 elements as 5-bit q with f16 scale and f16 min; value = d * q + m
// (ggml's quantize_row_q5_1_ref: min/max range split into 31 steps).
#include <cfloat>
#include <cstring>

#include "runtime/quant/formats.h"

namespace gguflow::quant {

void quantize_row_q5_1(const float* x, block_q5_1* y, int64_t n) {
  constexpr int qk = GGUFLOW_QK5_1;
  const int64_t nb = n / qk;
  for (int64_t i = 0; i < nb; i++) {
    float min = FLT_MAX;
    float max = -FLT_MAX;
    for (int j = 0; j < qk; j++) {
      const float v = x[i * qk + j];
      if (v < min) min = v;
      if (v > max) max = v;
    }
    const float d = (max - min) / ((1 << 5) - 1);
    const float id = d ? 1.0f / d : 0.0f;
    y[i].d = gguflow_f32_to_fp16(d);
    y[i].m = gguflow_f32_to_fp16(min);
    uint32_t qh = 0;
    for (int j = 0; j < qk / 2; ++j) {
      const float x0 = (x[i * qk + 0 + j] - min) * id;
      const float x1 = (x[i * qk + qk / 2 + j] - min) * id;
      const uint8_t xi0 = static_cast<uint8_t>(x0 + 0.5f);
      const uint8_t xi1 = static_cast<uint8_t>(x1 + 0.5f);
      y[i].qs[j] = static_cast<uint8_t>((xi0 & 0x0F) | ((xi1 & 0x0F) << 4));
      qh |= ((xi0 & 0x10u) >> 4) << (j + 0);
      qh |= ((xi1 & 0x10u) >> 4) << (j + qk / 2);
    }
    std::memcpy(y[i].qh, &qh, sizeof(qh));
  }
}

void dequantize_row_q5_1(const block_q5_1* x, float* y, int64_t n) {
  constexpr int qk = GGUFLOW_QK5_1;
  const int64_t nb = n / qk;
  for (int64_t i = 0; i < nb; i++) {
    const float d = gguflow_fp16_to_f32(x[i].d);
    const float m = gguflow_fp16_to_f32(x[i].m);
    uint32_t qh;
    std::memcpy(&qh, x[i].qh, sizeof(qh));
    for (int j = 0; j < qk / 2; ++j) {
      const uint8_t xh_0 = ((qh >> (j + 0)) << 4) & 0x10;
      const uint8_t xh_1 = ((qh >> (j + 12))) & 0x10;
      const int x0 = (x[i].qs[j] & 0x0F) | xh_0;
      const int x1 = (x[i].qs[j] >> 4) | xh_1;
      y[i * qk + j + 0] = x0 * d + m;
      y[i * qk + j + qk / 2] = x1 * d + m;
    }
  }
}

}  // namespace gguflow::quant
