// F32, F16 and BF16 rows: element-wise conversions (ggml's fp16/bf16 row converters).
#include <cstring>

#include "runtime/quant/formats.h"

namespace gguflow::quant {

void dequantize_row_f32(const float* src, float* dst, int64_t n) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void quantize_row_f32(const float* src, float* dst, int64_t n) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void dequantize_row_f16(const gguflow_fp16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = gguflow_fp16_to_f32(src[i]);
}

void quantize_row_f16(const float* src, gguflow_fp16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = gguflow_f32_to_fp16(src[i]);
}

void dequantize_row_bf16(const gguflow_bf16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = gguflow_bf16_to_f32(src[i]);
}

void quantize_row_bf16(const float* src, gguflow_bf16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = gguflow_f32_to_bf16(src[i]);
}

}  // namespace gguflow::quant
