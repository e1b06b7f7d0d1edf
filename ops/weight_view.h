// A weight matrix as ops see it: a view into the GGUF mapping, never a widened copy.
//
// GGUF shapes are [ne0, ne1]: `n` = ne0 elements per row (contiguous), `n_rows` = ne1 (times
// any higher dims). Row r starts at `data + r * row_bytes` and holds n elements of `type`,
// encoded in blocks of the type's block_size elements (plugins/abi/ggml_type.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gguflow::ops {

struct WeightView {
  uint32_t type = 0;           // GGML type id
  const void* data = nullptr;  // row 0, inside the mapping
  size_t row_bytes = 0;        // bytes of one row of n elements
  int64_t n = 0;               // elements per row (ne0)
  int64_t n_rows = 0;          // rows (ne1 * ne2 * ...)
  // 0: row-major as above. > 0: `data` is the kernel plugin's packed layout of the same bytes
  // (groups of pack_rows rows interleaved, runtime/exec/packed_weights.h); only the plugin's
  // *_packed kernels read it, and row() does not apply.
  uint32_t pack_rows = 0;
  // `data` lies in a read-only file mapping, so its pages may be dropped from the process and
  // fault back in (packing releases the row-major pages it replaces only then).
  bool file_mapped = false;

  const void* row(int64_t r) const {
    return static_cast<const char*>(data) + static_cast<size_t>(r) * row_bytes;
  }
};

// Bytes of a row of `n` elements of `type`. Throws gguflow::Error naming `what` when the type
// has no known block geometry or `n` is not a multiple of its block size.
size_t type_row_bytes(uint32_t type, int64_t n, std::string_view what);

// Name of a GGML type for messages ("Q4_K", or "type#N" for unknown ids).
std::string_view type_name(uint32_t type);

}  // namespace gguflow::ops
