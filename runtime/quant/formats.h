// Per-format scalar reference codecs behind runtime/quant/quant.h, one format per .cc file.
//
// Each pair follows GGML's published reference (`quantize_row_<t>_ref`, `dequantize_row_<t>`)
// operation by operation, so results are bit-exact: same float operations in the same order,
// same rounding helpers. `n` is the element count of the row and a multiple of the block size
// (the dispatcher in quant.cc checks it); a row of n elements is n / QK blocks.
#pragma once

#include <cstdint>

#include "plugins/abi/quant_blocks.h"

namespace gguflow::quant {

// F32 / F16 / BF16 (float_formats.cc). F32 "quantization" is a copy.
void dequantize_row_f32(const float* src, float* dst, int64_t n);
void quantize_row_f32(const float* src, float* dst, int64_t n);
void dequantize_row_f16(const gguflow_fp16_t* src, float* dst, int64_t n);
void quantize_row_f16(const float* src, gguflow_fp16_t* dst, int64_t n);
void dequantize_row_bf16(const gguflow_bf16_t* src, float* dst, int64_t n);
void quantize_row_bf16(const float* src, gguflow_bf16_t* dst, int64_t n);

// 32-element block formats.
void dequantize_row_q4_0(const block_q4_0* src, float* dst, int64_t n);
void quantize_row_q4_0(const float* src, block_q4_0* dst, int64_t n);
void dequantize_row_q4_1(const block_q4_1* src, float* dst, int64_t n);
void quantize_row_q4_1(const float* src, block_q4_1* dst, int64_t n);
void dequantize_row_q5_0(const block_q5_0* src, float* dst, int64_t n);
void quantize_row_q5_0(const float* src, block_q5_0* dst, int64_t n);
void dequantize_row_q5_1(const block_q5_1* src, float* dst, int64_t n);
void quantize_row_q5_1(const float* src, block_q5_1* dst, int64_t n);
void dequantize_row_q8_0(const block_q8_0* src, float* dst, int64_t n);
void quantize_row_q8_0(const float* src, block_q8_0* dst, int64_t n);
void dequantize_row_q8_1(const block_q8_1* src, float* dst, int64_t n);
void quantize_row_q8_1(const float* src, block_q8_1* dst, int64_t n);

// 256-element k-quant super-blocks.
void dequantize_row_q2_K(const block_q2_K* src, float* dst, int64_t n);
void quantize_row_q2_K(const float* src, block_q2_K* dst, int64_t n);
void dequantize_row_q3_K(const block_q3_K* src, float* dst, int64_t n);
void quantize_row_q3_K(const float* src, block_q3_K* dst, int64_t n);
void dequantize_row_q4_K(const block_q4_K* src, float* dst, int64_t n);
void quantize_row_q4_K(const float* src, block_q4_K* dst, int64_t n);
void dequantize_row_q5_K(const block_q5_K* src, float* dst, int64_t n);
void quantize_row_q5_K(const float* src, block_q5_K* dst, int64_t n);
void dequantize_row_q6_K(const block_q6_K* src, float* dst, int64_t n);
void quantize_row_q6_K(const float* src, block_q6_K* dst, int64_t n);
void dequantize_row_q8_K(const block_q8_K* src, float* dst, int64_t n);
void quantize_row_q8_K(const float* src, block_q8_K* dst, int64_t n);

}  // namespace gguflow::quant
