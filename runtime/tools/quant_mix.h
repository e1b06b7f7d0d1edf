// Which GGML type each tensor gets for a target file type ("Q4_K_M", "Q8_0", ...): the rules
// of llama.cpp's llama-quantize (`llama_tensor_get_type`, without imatrix or overrides), so
// that our files have the mixes people know from GGUF files in the wild:
//  - norms, biases and every 1-D tensor stay as they are (F32);
//  - the output projection (or the token embedding when it is tied to the output) gets Q6_K
//    (Q8_0 when its rows are not a multiple of 256, or for the Q8_0 file type);
//  - *_K_M types give attn_v and ffn_down Q6_K in the first and last eighth of the layers and
//    every third layer between (`more_bits_layer`); Q3_K_M / Q2_K raise attn_v, attn_output
//    and ffn_down by one or two steps;
//  - a row length that is not a multiple of the chosen type's block falls back
//    (Q4_K->Q5_0, Q5_K->Q5_1, Q6_K->Q8_0, Q2_K/Q3_K->Q4_0, then F16).
// Tensors must be planned in llama.cpp's order (`llama_tensor_order`), since the attn_v and
// ffn_down rules count tensors as they come.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gguflow {

// A target file type: its name, `general.file_type` value (llama_ftype) and base GGML type.
struct FileTypeSpec {
  const char* name;
  uint32_t ftype;
  uint32_t base_type;
};

// All supported file types, and lookup by name (case-insensitive). `find` returns null for an
// unknown name; `file_type_names` lists the valid ones for error messages.
std::span<const FileTypeSpec> file_types();
const FileTypeSpec* find_file_type(std::string_view name);
std::string file_type_names();

// True for the layers that *_K_M types give more bits: the first and last n_layer/8 and every
// third layer in between (llama.cpp's use_more_bits).
bool more_bits_layer(int layer, int n_layer);

// Sorts tensor names as llama.cpp's model loader does: tensors outside blocks first, then by
// block number, then by name. Returns the permutation (indices into `names`).
std::vector<size_t> llama_tensor_order(std::span<const std::string> names);

// Stateful planner: call `choose` once per tensor, in llama_tensor_order.
class QuantMixPlanner {
 public:
  // `n_layer`: the model's block count; `tied_output`: no output.weight, so token_embd is
  // also the output projection; `n_gqa`: n_head / n_head_kv (Q2_K raises attn_v when >= 4).
  QuantMixPlanner(const FileTypeSpec& spec, int n_layer, bool tied_output, int n_gqa);

  // The type for tensor `name` of shape `dims` (ne0 first) currently stored as `current_type`.
  uint32_t choose(std::string_view name, std::span<const uint64_t> dims, uint32_t current_type);

 private:
  uint32_t mix_rule(std::string_view name, uint64_t ne0, uint32_t type);
  const FileTypeSpec& spec_;
  int n_layer_;
  bool tied_output_;
  int n_gqa_;
  int i_attention_wv_ = 0;  // attn_v tensors seen so far
  int i_ffn_down_ = 0;      // ffn_down tensors seen so far
};

}  // namespace gguflow
