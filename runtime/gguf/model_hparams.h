// Hyperparameters of a llama-family model, read from GGUF metadata with the defaults real
// files rely on (e.g. stories260K has no rope.freq_base: 10000 is used).
#pragma once

#include <cstdint>
#include <string>

#include "runtime/gguf/gguf_file.h"

namespace gguflow {

struct ModelHparams {
  std::string architecture;   // general.architecture
  int64_t n_layer = 0;        // {arch}.block_count
  int64_t n_ctx_train = 0;    // {arch}.context_length
  int64_t n_embd = 0;         // {arch}.embedding_length
  int64_t n_ff = 0;           // {arch}.feed_forward_length
  int64_t n_head = 0;         // {arch}.attention.head_count
  int64_t n_head_kv = 0;      // {arch}.attention.head_count_kv (default n_head)
  int64_t head_dim = 0;       // {arch}.attention.key_length (default n_embd / n_head)
  int64_t n_rot = 0;          // {arch}.rope.dimension_count (default head_dim)
  int64_t n_vocab = 0;        // rows of token_embd, else tokenizer size, else {arch}.vocab_size
  double rope_freq_base = 10000.0;
  double rms_eps = 1e-5;      // the norms' epsilon: {arch}.attention.layer_norm_rms_epsilon, or
                              // for LayerNorm models (layer_norm) layer_norm_epsilon
  bool layer_norm = false;    // the file gives layer_norm_epsilon, not the RMS one (BERT, phi2)
  bool rope_neox = false;     // qwen2-style pairing (i, i + n_rot/2) instead of (2i, 2i+1)
  bool learned_positions = false;  // position_embd.weight is added to the tokens: no rope
  bool encoder = false;       // {arch}.attention.causal is false: BERT-style, no lm-head
  bool tied_output = false;   // a decoder without output.weight: the lm-head is token_embd
  uint64_t n_params = 0;      // elements over all tensors
};

// Throws gguflow::Error naming the file and key when a required key is missing or mistyped.
ModelHparams read_model_hparams(const GgufFile& file);

// Refuses hyperparameters of the wrong type or inconsistent with the tensors, naming the file,
// the key, its type and value: integer keys ({arch}.block_count, context_length,
// embedding_length, head counts, ...) must be positive integers (not bool, string or float);
// embedding_length must equal token_embd's ne0 and the tokenizer's token count its rows.
// Called whenever a graph is bound to a model.
void check_model_metadata(const GgufFile& file);

}  // namespace gguflow
