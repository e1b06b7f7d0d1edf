// `gguflow synth`: writes a GGUF model with the exact shape and tensor type mix of a real one
// (Qwen2.5-0.5B, Llama-3.2-1B, ...) filled with seeded random weights, for benchmarks and demos
// without downloads. Weights are generated, quantized and written a chunk of rows at a time
// (tbb::parallel_for over rows), so memory stays far below the file size.
//
// Weights: 2-D matrices and Q/K/V biases ~ N(0, 0.02); norm weights ~ 1 + N(0, 0.02). Each
// row has its own random stream derived from (seed, tensor, row), so the output is the same
// for any thread count. The type mix is llama-quantize's (quant_mix.h).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gguflow {

// The tensor set follows the architecture: llama and qwen2 (pre-norm blocks, SwiGLU; qwen2
// with Q/K/V biases), qwen3 (+ per-head q/k norms), gemma2 (+ post-attention and post-FFN
// norms), gemma3 (gemma2 + q/k norms), phi3 (fused attn_qkv, gate and up fused in ffn_up);
// encoders bert (learned positions, token types, LayerNorms and biases everywhere, GELU FFN)
// and nomic-bert (bert without positions or matmul biases, fused attn_qkv, gated FFN), with the
// tensor sets of ../shared/data/reference/ENCODERS.md. Encoders carry no lm-head; pass
// --vocab with a WordPiece vocabulary (ggml-vocab-bert-bge.gguf) for realistic token counts.
struct SynthShape {
  std::string arch = "llama";  // llama | qwen2 | qwen3 | gemma2 | gemma3 | phi3 | bert | nomic-bert
  int64_t n_embd = 0;
  int64_t n_layer = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t n_ff = 0;
  int64_t n_vocab = 0;
  int64_t n_ctx = 4096;
  double rope_freq_base = 10000.0;
  double rms_eps = 1e-5;
  bool qkv_bias = false;     // attn_q/k/v biases (qwen2)
  bool tied_output = false;  // no output.weight; token_embd is the output projection
  int64_t head_dim = 0;        // attention.key_length/value_length; 0: n_embd / n_head, unwritten
  int64_t n_rot = 0;           // rope.dimension_count; 0: head_dim (written for llama and phi3)
  int64_t sliding_window = 0;  // attention.sliding_window; 0: unwritten
  int64_t pooling_type = 0;    // encoders: {arch}.pooling_type (1 mean, 2 cls); 0: unwritten
};

struct SynthPreset {
  const char* name;
  const char* description;
  SynthShape shape;
};
std::span<const SynthPreset> synth_presets();
const SynthPreset* find_synth_preset(std::string_view name);  // null when unknown

struct SynthOptions {
  SynthShape shape;
  std::string name = "synthetic";  // general.name
  std::string file_type = "Q4_K_M";
  uint64_t seed = 0;
  std::string vocab_path;  // GGUF to copy tokenizer.* metadata from; empty: placeholder SPM
  std::string output;
};

struct SynthTensor {
  std::string name;
  uint32_t type = 0;
  std::vector<uint64_t> dims;  // ne0 first
};

struct SynthReport {
  std::vector<SynthTensor> tensors;  // in file order
  uint64_t tensor_bytes = 0;
};

// Throws gguflow::Error naming the bad field of the shape, or an unknown file type. (The CLI
// checks this before it reads a vocabulary or writes anything: a usage error.)
void check_synth_options(const SynthShape& shape, const std::string& file_type);

// Checks the shape (throws gguflow::Error naming the bad field), then writes the model.
// `progress(done_bytes, total_bytes)` is called after each written chunk when set.
SynthReport synth_model(const SynthOptions& options,
                        const std::function<void(uint64_t, uint64_t)>& progress = {});

// The tensors (names, shapes, types) a shape and file type produce, without writing anything.
std::vector<SynthTensor> synth_tensor_plan(const SynthShape& shape, const std::string& file_type);

}  // namespace gguflow
