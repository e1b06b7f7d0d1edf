// Row ranges of a tensor decoded to f32 through the reference dequantizers, for
// `gguflow tensor` and external checks. Rows are the tensor's ne1*ne2*ne3 rows of ne0 values.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "runtime/gguf/gguf_file.h"

namespace gguflow {

struct RowRange {
  int64_t begin = 0;
  int64_t end = 0;  // exclusive
};

// Parses "A:B" (either side may be empty: ":B", "A:", ":") against a tensor of `n_rows` rows;
// throws gguflow::Error naming `text` when it is malformed, empty or out of range.
RowRange parse_row_range(const std::string& text, int64_t n_rows);

// Calls `sink(values, n_rows_in_chunk)` for consecutive chunks of rows [range.begin,
// range.end), each chunk `values` = [n_rows_in_chunk][ne0] f32. Throws for a type without a
// reference dequantizer.
void dequantize_tensor_rows(const GgufFile& file, const GgufTensorInfo& tensor, RowRange range,
                            const std::function<void(const float* values, int64_t rows)>& sink);

}  // namespace gguflow
