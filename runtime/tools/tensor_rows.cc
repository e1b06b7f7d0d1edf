#include "runtime/tools/tensor_rows.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include "ops/error.h"
#include "runtime/quant/quant.h"

namespace gguflow {
namespace {

constexpr uint64_t kChunkFloats = 1u << 20;  // values decoded per sink call (4 MiB)

int64_t parse_row(std::string_view text, std::string_view whole, int64_t fallback) {
  if (text.empty()) return fallback;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    throw error("--rows '", whole, "': expected A:B with integer row numbers, found '", text, "'");
  return v;
}

}  // namespace

RowRange parse_row_range(const std::string& text, int64_t n_rows) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos)
    throw error("--rows '", text, "': expected A:B (rows A up to, not including, B)");
  RowRange r{parse_row(std::string_view(text).substr(0, colon), text, 0),
             parse_row(std::string_view(text).substr(colon + 1), text, n_rows)};
  if (r.begin < 0 || r.end > n_rows || r.begin >= r.end)
    throw error("--rows '", text, "': expected 0 <= A < B <= ", n_rows, " (the tensor has ", n_rows,
                " rows)");
  return r;
}

void dequantize_tensor_rows(const GgufFile& file, const GgufTensorInfo& tensor, RowRange range,
                            const std::function<void(const float*, int64_t)>& sink) {
  if (!has_dequantize_reference(tensor.type))
    throw error(file.path(), ": tensor '", tensor.name, "' has type ", tensor.type_name(),
                ", which has no reference dequantizer");
  const auto bytes = file.tensor_bytes(tensor);
  const int64_t row_length = static_cast<int64_t>(tensor.row_length());
  const uint64_t row_bytes = tensor.row_bytes();
  const int64_t chunk = std::max<int64_t>(1, static_cast<int64_t>(kChunkFloats / row_length));
  std::vector<float> values;  // [chunk rows][row_length]
  for (int64_t r0 = range.begin; r0 < range.end; r0 += chunk) {
    const int64_t rows = std::min(chunk, range.end - r0);
    values.resize(static_cast<size_t>(rows * row_length));
    for (int64_t r = 0; r < rows; ++r) {
      dequantize_row(tensor.type, bytes.data() + (r0 + r) * row_bytes, values.data() + r * row_length,
                     row_length);
    }
    sink(values.data(), rows);
  }
}

}  // namespace gguflow
