#include "runtime/tools/row_convert.h"

#include <cstring>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "plugins/abi/ggml_type.h"
#include "ops/error.h"
#include "runtime/quant/quant.h"

namespace gguflow {

uint64_t row_bytes(uint32_t type, int64_t row_length) {
  const GgmlTypeInfo* info = ggml_type_info(type);
  GGUFLOW_CHECK(info->block_size != 0 && row_length % info->block_size == 0);
  return static_cast<uint64_t>(row_length) / info->block_size * info->type_size;
}

void convert_rows(uint32_t src_type, const void* src, uint32_t dst_type, void* dst,
                  int64_t n_rows, int64_t row_length) {
  const uint64_t src_row = row_bytes(src_type, row_length);
  const uint64_t dst_row = row_bytes(dst_type, row_length);
  if (src_type == dst_type) {
    std::memcpy(dst, src, static_cast<size_t>(src_row * n_rows));
    return;
  }
  if (!has_dequantize_reference(src_type) || !has_quantize_reference(dst_type)) {
    throw error("cannot convert ", ggml_type_info(src_type)->name, " to ",
                ggml_type_info(dst_type)->name, ": no reference codec");
  }
  const auto* in = static_cast<const uint8_t*>(src);
  auto* out = static_cast<uint8_t*>(dst);
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, n_rows), [&](const tbb::blocked_range<int64_t>& rows) {
    std::vector<float> scratch;  // [row_length] f32 row when the source is not F32
    if (src_type != GGML_TYPE_F32) scratch.resize(static_cast<size_t>(row_length));
    for (int64_t r = rows.begin(); r != rows.end(); ++r) {
      const float* row = reinterpret_cast<const float*>(in + r * src_row);
      if (src_type != GGML_TYPE_F32) {
        dequantize_row(src_type, in + r * src_row, scratch.data(), row_length);
        row = scratch.data();
      }
      quantize_row(dst_type, row, out + r * dst_row, row_length);
    }
  });
}

}  // namespace gguflow
