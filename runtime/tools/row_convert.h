// Converting a block of rows from one GGML type to another through the scalar reference
// codecs (runtime/quant), in parallel over rows with oneTBB. Rows are independent in every
// reference quantizer, so the result does not depend on the thread count.
#pragma once

#include <cstdint>

namespace gguflow {

// src: n_rows rows of `row_length` elements of `src_type`; dst: the same rows as `dst_type`.
// Equal types are copied. Throws gguflow::Error when either type has no reference codec.
void convert_rows(uint32_t src_type, const void* src, uint32_t dst_type, void* dst,
                  int64_t n_rows, int64_t row_length);

// Bytes of one row of `row_length` elements of `type`.
uint64_t row_bytes(uint32_t type, int64_t row_length);

}  // namespace gguflow
