// Scalar reference quantization: the obviously-correct layer every kernel plugin is tested
// against. Bit-exact with GGML's reference (`*_ref`) quantizers and `to_float` dequantizers.
//
// A row of `n` elements of type `type` occupies `n / block_size * type_size` bytes
// (plugins/abi/ggml_type.h); `n` must be a multiple of the type's block size.
#pragma once

#include <cstddef>
#include <cstdint>

#include "plugins/abi/ggml_type.h"

namespace gguflow {

// True when this layer can dequantize / quantize `type`.
bool has_dequantize_reference(uint32_t type);
bool has_quantize_reference(uint32_t type);

// dst[0..n) = decoded src. Throws gguflow::Error naming the type if unsupported or if `n` is
// not a multiple of the block size.
void dequantize_row(uint32_t type, const void* src, float* dst, int64_t n);

// Writes the encoding of src[0..n) to dst and returns the number of bytes written.
size_t quantize_row(uint32_t type, const float* src, void* dst, int64_t n);

}  // namespace gguflow
