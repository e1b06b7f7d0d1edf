// Q8_0: 32 elements as int8 q with one f16 scale; value = d * q, d = max|x| / 127
// (ggml's quantize_row_q8_0_ref; also the activation format of Q4_0/Q5_0/Q8_0 dot products).
#include <algorithm>
#include <cmath>

#include "runtime/quant/formats.h"

namespace gguflow::quant {

void quantize_row_q8_0(const float* x, block_q8_0* y, int64_t n) {
  constexpr int qk = GGUFLOW_QK8_0;
  const int64_t nb = n / qk;
  for (int64_t i = 0; i < nb; i++) {
    float amax = 0.0f;
    for (int j = 0; j < qk; j++) amax = std::max(amax, std::fabs(x[i * qk + j]));
    const float d = amax / ((1 << 7) - 1);
    const float id = d ? 1.0f / d : 0.0f;
    y[i].d = gguflow_f32_to_fp16(d);
    for (int j = 0; j < qk; ++j) {
      const float x0 = x[i * qk + j] * id;
      y[i].qs[j] = static_cast<int8_t>(std::round(x0));  // half away from zero, like roundf
    }
  }
}

void dequantize_row_q8_0(const block_q8_0* x, float* y, int64_t n) {
  constexpr int qk = GGUFLOW_QK8_0;
  const int64_t nb = n / qk;
  for (int64_t i = 0; i < nb; i++) {
    const float d = gguflow_fp16_to_f32(x[i].d);
    for (int j = 0; j < qk; ++j) y[i * qk + j] = x[i].qs[j] * d;
  }
}

}  // namespace gguflow::quant
