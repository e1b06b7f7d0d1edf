#include "runtime/tools/quantize_model.h"

#include <algorithm>
#include <cstdint>
#include <map>

#include "plugins/abi/ggml_type.h"
#include "ops/error.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_names.h"
#include "runtime/gguf/model_hparams.h"
#include "runtime/gguf/gguf_writer.h"
#include "runtime/quant/quant.h"
#include "runtime/tools/quant_mix.h"
#include "runtime/tools/row_convert.h"

namespace gguflow {
namespace {

constexpr uint32_t kQuantizationVersion = 2;       // GGML_QNT_VERSION
constexpr uint64_t kChunkTargetBytes = 16u << 20;  // input bytes converted per write

bool is_float_type(uint32_t type) {
  return type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_BF16;
}

int64_t metadata_int(const GgufFile& file, std::string_view pattern, int64_t fallback) {
  const std::string key = names::expand(pattern, file.architecture());
  const GgufValue* v = file.find(key);
  return v ? v->as_int(key) : fallback;
}

}  // namespace

QuantizeReport quantize_model(const std::string& input, const std::string& output,
                              const std::string& file_type) {
  const FileTypeSpec* spec = find_file_type(file_type);
  if (!spec) throw error("unknown TYPE '", file_type, "'; expected one of ", file_type_names());

  auto in = GgufFile::open(input);
  // A float target dequantizes (every tensor is read through its reference codec); a quantized
  // target takes float tensors only, as llama-quantize without --allow-requantize.
  for (const GgufTensorInfo& t : in->tensors()) {
    if (!is_float_type(t.type) && !is_float_type(spec->base_type))
      throw error(input, ": ", has_dequantize_reference(t.type) ? "already quantized" : "not a float model",
                  " (tensor '", t.name, "' is ", t.type_name(), "); quantize from an F32, F16 or BF16 file",
                  has_dequantize_reference(t.type) ? ", or dequantize it with TYPE F32" : "");
  }

  // The layer and head counts choose the type mix: a block_count of 2^40 became 0 layers as an
  // int, and -1 was taken. The same checks as every graph load, and counts that fit an int.
  check_model_metadata(*in);
  const int64_t n_layer = metadata_int(*in, names::kBlockCount, 0);
  const int64_t n_head = metadata_int(*in, names::kHeadCount, 1);
  const int64_t n_head_kv = metadata_int(*in, names::kHeadCountKv, n_head);
  for (const int64_t count : {n_layer, n_head, n_head_kv})
    if (count > INT32_MAX)
      throw error(input, ": metadata: a layer or head count of ", count, ": expected at most ", INT32_MAX);
  const bool tied_output = in->find_tensor(names::kOutput) == nullptr;
  QuantMixPlanner planner(*spec, static_cast<int>(n_layer), tied_output,
                          n_head_kv > 0 ? static_cast<int>(n_head / n_head_kv) : 1);

  // llama-quantize's tensor order (outside blocks, then by block), types planned in it.
  std::vector<std::string> tensor_names;
  for (const GgufTensorInfo& t : in->tensors()) tensor_names.push_back(t.name);
  QuantizeReport report;
  std::vector<const GgufTensorInfo*> order;
  for (size_t i : llama_tensor_order(tensor_names)) {
    const GgufTensorInfo& t = in->tensors()[i];
    order.push_back(&t);
    QuantizedTensor q{t.name, t.type, planner.choose(t.name, t.dims, t.type), 0};
    // Dequantizing: tensors the mix leaves as they are (1-D, position tables) still leave the
    // quantized formats, as F32.
    if (is_float_type(spec->base_type) && !is_float_type(q.to_type)) q.to_type = GGML_TYPE_F32;
    // Before anything is written: a type without a reference codec (IQ2_XXS, I32, F64) failed
    // mid-file naming neither the file nor the tensor.
    if (q.from_type != q.to_type && (!has_dequantize_reference(q.from_type) || !has_quantize_reference(q.to_type)))
      throw error(input, ": tensor '", t.name, "' is ", t.type_name(), ": no reference codec converts it to ",
                  ggml_type_info(q.to_type)->name);
    report.tensors.push_back(q);
  }

  GgufWriter writer(output, static_cast<uint32_t>(in->alignment()));
  writer.copy_metadata(*in, {"general.quantization_version", names::kFileType});
  writer.set_u32("general.quantization_version", kQuantizationVersion);
  writer.set_u32(names::kFileType, spec->ftype);
  for (size_t i = 0; i < order.size(); ++i) writer.add_tensor(order[i]->name, report.tensors[i].to_type, order[i]->dims);
  writer.write_header();

  std::vector<uint8_t> converted;  // [chunk rows][output row bytes]
  for (size_t i = 0; i < order.size(); ++i) {
    const GgufTensorInfo& t = *order[i];
    QuantizedTensor& q = report.tensors[i];
    const auto bytes = in->tensor_bytes(t);
    const int64_t row_length = static_cast<int64_t>(t.row_length());
    const int64_t n_rows = static_cast<int64_t>(t.n_rows());
    const uint64_t in_row = row_bytes(q.from_type, row_length);
    const uint64_t out_row = row_bytes(q.to_type, row_length);
    const int64_t chunk = std::max<int64_t>(1, static_cast<int64_t>(kChunkTargetBytes / in_row));
    for (int64_t r = 0; r < n_rows; r += chunk) {
      const int64_t rows = std::min(chunk, n_rows - r);
      converted.resize(static_cast<size_t>(rows * out_row));
      convert_rows(q.from_type, bytes.data() + r * in_row, q.to_type, converted.data(), rows, row_length);
      writer.write_tensor_data(converted.data(), converted.size());
    }
    q.bytes = out_row * n_rows;
    report.input_bytes += bytes.size();
    report.output_bytes += q.bytes;
  }
  writer.finish();
  return report;
}

std::string type_mix_summary(const QuantizeReport& report) {
  std::map<std::string, int> counts;
  for (const QuantizedTensor& t : report.tensors) ++counts[ggml_type_info(t.to_type)->name];
  std::vector<std::pair<std::string, int>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [name, n] : sorted) {
    if (!out.empty()) out += ", ";
    out += name + " x" + std::to_string(n);
  }
  return out;
}

}  // namespace gguflow
