// llama-quantize's per-tensor type rules (see quant_mix.h). Only the rules that apply to
// dense (non-MoE) models without an imatrix are reproduced.
#include "runtime/tools/quant_mix.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <numeric>

#include "plugins/abi/ggml_type.h"
#include "runtime/gguf/gguf_names.h"

namespace gguflow {
namespace {

// llama_ftype values (llama.h), as stored in `general.file_type`.
enum : uint32_t {
  kFtypeF32 = 0, kFtypeF16 = 1, kFtypeQ4_0 = 2, kFtypeQ4_1 = 3, kFtypeQ8_0 = 7, kFtypeQ5_0 = 8,
  kFtypeQ5_1 = 9, kFtypeQ2_K = 10, kFtypeQ3_K_S = 11, kFtypeQ3_K_M = 12, kFtypeQ3_K_L = 13,
  kFtypeQ4_K_S = 14, kFtypeQ4_K_M = 15, kFtypeQ5_K_S = 16, kFtypeQ5_K_M = 17, kFtypeQ6_K = 18,
  kFtypeBF16 = 32,
};

constexpr std::array kFileTypes = {
    FileTypeSpec{"F32", kFtypeF32, GGML_TYPE_F32},
    FileTypeSpec{"F16", kFtypeF16, GGML_TYPE_F16},
    FileTypeSpec{"BF16", kFtypeBF16, GGML_TYPE_BF16},
    FileTypeSpec{"Q8_0", kFtypeQ8_0, GGML_TYPE_Q8_0},
    FileTypeSpec{"Q4_0", kFtypeQ4_0, GGML_TYPE_Q4_0},
    FileTypeSpec{"Q4_1", kFtypeQ4_1, GGML_TYPE_Q4_1},
    FileTypeSpec{"Q5_0", kFtypeQ5_0, GGML_TYPE_Q5_0},
    FileTypeSpec{"Q5_1", kFtypeQ5_1, GGML_TYPE_Q5_1},
    FileTypeSpec{"Q2_K", kFtypeQ2_K, GGML_TYPE_Q2_K},
    FileTypeSpec{"Q3_K_S", kFtypeQ3_K_S, GGML_TYPE_Q3_K},
    FileTypeSpec{"Q3_K_M", kFtypeQ3_K_M, GGML_TYPE_Q3_K},
    FileTypeSpec{"Q3_K_L", kFtypeQ3_K_L, GGML_TYPE_Q3_K},
    FileTypeSpec{"Q4_K_S", kFtypeQ4_K_S, GGML_TYPE_Q4_K},
    FileTypeSpec{"Q4_K_M", kFtypeQ4_K_M, GGML_TYPE_Q4_K},
    FileTypeSpec{"Q5_K_S", kFtypeQ5_K_S, GGML_TYPE_Q5_K},
    FileTypeSpec{"Q5_K_M", kFtypeQ5_K_M, GGML_TYPE_Q5_K},
    FileTypeSpec{"Q6_K", kFtypeQ6_K, GGML_TYPE_Q6_K},
};

constexpr uint64_t kQK_K = 256;

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool is_block_quantized(uint32_t type) { return ggml_type_info(type)->block_size > 1; }

// llama.cpp quantizes only 2-D+ weights, and never norms or a few small special tensors.
bool allows_quantization(std::string_view name, std::span<const uint64_t> dims) {
  if (dims.size() < 2) return false;
  if (!ends_with(name, "weight")) return false;
  if (contains(name, "_norm.weight")) return false;
  if (contains(name, "ffn_gate_inp.weight")) return false;  // MoE router
  if (name == "position_embd.weight" || name == "token_types.weight") return false;
  return true;
}

// A type whose block does not divide the row length is replaced by a compatible one.
uint32_t fall_back_for_row_length(uint32_t type, uint64_t ne0) {
  if (ne0 % ggml_type_info(type)->block_size == 0) return type;
  uint32_t fallback = GGML_TYPE_F16;
  switch (type) {
    case GGML_TYPE_Q2_K: case GGML_TYPE_Q3_K: fallback = GGML_TYPE_Q4_0; break;
    case GGML_TYPE_Q4_K: fallback = GGML_TYPE_Q5_0; break;
    case GGML_TYPE_Q5_K: fallback = GGML_TYPE_Q5_1; break;
    case GGML_TYPE_Q6_K: fallback = GGML_TYPE_Q8_0; break;
    // 32-element types: llama-quantize aborts here; like the reference files made for
    // stories260K (DATA.md section 3) we keep such tensors as F16.
    default: fallback = GGML_TYPE_F16; break;
  }
  return ne0 % ggml_type_info(fallback)->block_size == 0 ? fallback : uint32_t{GGML_TYPE_F16};
}

}  // namespace

std::span<const FileTypeSpec> file_types() { return kFileTypes; }

const FileTypeSpec* find_file_type(std::string_view name) {
  for (const FileTypeSpec& spec : kFileTypes) {
    std::string_view n = spec.name;
    if (n.size() == name.size() &&
        std::equal(n.begin(), n.end(), name.begin(), [](char a, char b) {
          return std::toupper(static_cast<unsigned char>(a)) == std::toupper(static_cast<unsigned char>(b));
        }))
      return &spec;
  }
  return nullptr;
}

std::string file_type_names() {
  std::string out;
  for (const FileTypeSpec& spec : kFileTypes) {
    if (!out.empty()) out += ", ";
    out += spec.name;
  }
  return out;
}

bool more_bits_layer(int layer, int n_layer) {
  return layer < n_layer / 8 || layer >= 7 * n_layer / 8 || (layer - n_layer / 8) % 3 == 2;
}

std::vector<size_t> llama_tensor_order(std::span<const std::string> names) {
  std::vector<size_t> order(names.size());
  std::iota(order.begin(), order.end(), size_t{0});
  auto layer_of = [](const std::string& name) {
    int layer = -1;
    std::sscanf(name.c_str(), "blk.%d.", &layer);
    return layer;
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const int la = layer_of(names[a]), lb = layer_of(names[b]);
    if (la != lb) return la < lb;
    return names[a] < names[b];
  });
  return order;
}

QuantMixPlanner::QuantMixPlanner(const FileTypeSpec& spec, int n_layer, bool tied_output, int n_gqa)
    : spec_(spec), n_layer_(n_layer), tied_output_(tied_output), n_gqa_(n_gqa) {}

uint32_t QuantMixPlanner::choose(std::string_view name, std::span<const uint64_t> dims,
                                 uint32_t current_type) {
  if (!allows_quantization(name, dims)) return current_type;
  if (!is_block_quantized(spec_.base_type)) return spec_.base_type;  // F32/F16/BF16: no mix
  const uint32_t type = mix_rule(name, dims[0], spec_.base_type);
  return fall_back_for_row_length(type, dims[0]);
}

uint32_t QuantMixPlanner::mix_rule(std::string_view name, uint64_t ne0, uint32_t type) {
  const uint32_t ftype = spec_.ftype;
  const bool is_output = name == names::kOutput;
  const bool is_token_embd = name == names::kTokenEmbd;

  if (is_output || (tied_output_ && is_token_embd)) {
    if (ne0 % kQK_K != 0) return GGML_TYPE_Q8_0;
    return type == GGML_TYPE_Q8_0 ? GGML_TYPE_Q8_0 : GGML_TYPE_Q6_K;
  }
  if (is_token_embd) return type;

  if (contains(name, "attn_v.weight") || contains(name, "attn_qkv.weight")) {
    const int i = i_attention_wv_++;
    if (ftype == kFtypeQ2_K) return n_gqa_ >= 4 ? GGML_TYPE_Q4_K : GGML_TYPE_Q3_K;
    if (ftype == kFtypeQ3_K_M) return i < 2 ? GGML_TYPE_Q5_K : GGML_TYPE_Q4_K;
    if (ftype == kFtypeQ3_K_L) return GGML_TYPE_Q5_K;
    if ((ftype == kFtypeQ4_K_M || ftype == kFtypeQ5_K_M) && more_bits_layer(i, n_layer_))
      return GGML_TYPE_Q6_K;
    if (ftype == kFtypeQ4_K_S && i < 4) return GGML_TYPE_Q5_K;
    return type;
  }
  if (contains(name, "ffn_down")) {
    const int i = i_ffn_down_++;
    if (ftype == kFtypeQ2_K) return GGML_TYPE_Q3_K;
    if (ftype == kFtypeQ3_K_M) return i < n_layer_ / 16 ? GGML_TYPE_Q5_K : GGML_TYPE_Q4_K;
    if (ftype == kFtypeQ3_K_L) return GGML_TYPE_Q5_K;
    if ((ftype == kFtypeQ4_K_M || ftype == kFtypeQ5_K_M) && more_bits_layer(i, n_layer_))
      return GGML_TYPE_Q6_K;
    if (ftype == kFtypeQ4_K_S && i < n_layer_ / 8) return GGML_TYPE_Q5_K;
    return type;
  }
  if (contains(name, "attn_output.weight")) {
    if (ftype == kFtypeQ2_K) return GGML_TYPE_Q3_K;
    if (ftype == kFtypeQ3_K_M) return GGML_TYPE_Q4_K;
    if (ftype == kFtypeQ3_K_L) return GGML_TYPE_Q5_K;
    return type;
  }
  return type;
}

}  // namespace gguflow
