// Q8_1: Q8_0 plus s = d * sum(q) per block, the activation format of Q4_1/Q5_1 dot products
// (the sum lets the kernel apply the weight block's min once). ggml's quantize_row_q8_1_ref.
#include <algorithm>
#include <cmath>

#include "runtime/quant/formats.h"

namespace gguflow::quant {

void quantize_row_q8_1(const float* x, block_q8_1* y, int64_t n) {
  constexpr int qk = GGUFLOW_QK8_1;
  const int64_t nb = n / qk;
  for (int64_t i = 0; i < nb; i++) {
    float amax = 0.0f;
    for (int j = 0; j < qk; j++) amax = std::max(amax, std::fabs(x[i * qk + j]));
    const float d = amax / ((1 << 7) - 1);
    const float id = d ? 1.0f / d : 0.0f;
    y[i].d = gguflow_f32_to_fp16(d);
    int sum = 0;
    for (int j = 0; j < qk / 2; ++j) {
      const float v0 = x[i * qk + j] * id;
      const float v1 = x[i * qk + qk / 2 + j] * id;
      y[i].qs[j] = static_cast<int8_t>(std::round(v0));
      y[i].qs[qk / 2 + j] = static_cast<int8_t>(std::round(v1));
      sum += y[i].qs[j];
      sum += y[i].qs[qk / 2 + j];
    }
    y[i].s = gguflow_f32_to_fp16(sum * d);
  }
}

void dequantize_row_q8_1(const block_q8_1* x, float* y, int64_t n) {
  constexpr int qk = GGUFLOW_QK8_1;
  const int64_t nb = n / qk;
  for (int64_t i = 0; i < nb; i++) {
    const float d = gguflow_fp16_to_f32(x[i].d);
    for (int j = 0; j < qk; ++j) y[i * qk + j] = x[i].qs[j] * d;
  }
}

}  // namespace gguflow::quant
