// The one table of GGUF metadata keys and tensor-name patterns. No other file spells these.
//
// Patterns: "{arch}" stands for `general.architecture` (llama, qwen2, ...), "{i}" for a layer.
#pragma once

#include <string>
#include <string_view>

namespace gguflow::names {

// General metadata.
inline constexpr std::string_view kArchitecture = "general.architecture";
inline constexpr std::string_view kModelName = "general.name";
inline constexpr std::string_view kAlignment = "general.alignment";
inline constexpr std::string_view kFileType = "general.file_type";

// Hyperparameters.
inline constexpr std::string_view kBlockCount = "{arch}.block_count";
inline constexpr std::string_view kContextLength = "{arch}.context_length";
inline constexpr std::string_view kEmbeddingLength = "{arch}.embedding_length";
inline constexpr std::string_view kFeedForwardLength = "{arch}.feed_forward_length";
inline constexpr std::string_view kHeadCount = "{arch}.attention.head_count";
inline constexpr std::string_view kHeadCountKv = "{arch}.attention.head_count_kv";
inline constexpr std::string_view kKeyLength = "{arch}.attention.key_length";
inline constexpr std::string_view kValueLength = "{arch}.attention.value_length";
inline constexpr std::string_view kRmsEpsilon = "{arch}.attention.layer_norm_rms_epsilon";
inline constexpr std::string_view kRopeFreqBase = "{arch}.rope.freq_base";
inline constexpr std::string_view kPositionEmbd = "position_embd.weight";  // learned positions (BERT)
inline constexpr std::string_view kLayerNormEpsilon = "{arch}.attention.layer_norm_epsilon";
inline constexpr std::string_view kAttentionCausal = "{arch}.attention.causal";
inline constexpr std::string_view kRopeDimensionCount = "{arch}.rope.dimension_count";
inline constexpr std::string_view kVocabSize = "{arch}.vocab_size";
inline constexpr std::string_view kPoolingType = "{arch}.pooling_type";

// Tokenizer.
inline constexpr std::string_view kTokenizerModel = "tokenizer.ggml.model";
inline constexpr std::string_view kTokenizerPre = "tokenizer.ggml.pre";
inline constexpr std::string_view kTokenizerTokens = "tokenizer.ggml.tokens";
inline constexpr std::string_view kTokenizerScores = "tokenizer.ggml.scores";
inline constexpr std::string_view kTokenizerTokenType = "tokenizer.ggml.token_type";
inline constexpr std::string_view kTokenizerMerges = "tokenizer.ggml.merges";
inline constexpr std::string_view kTokenizerBosId = "tokenizer.ggml.bos_token_id";
inline constexpr std::string_view kTokenizerEosId = "tokenizer.ggml.eos_token_id";
inline constexpr std::string_view kTokenizerUnknownId = "tokenizer.ggml.unknown_token_id";
inline constexpr std::string_view kTokenizerPaddingId = "tokenizer.ggml.padding_token_id";
inline constexpr std::string_view kTokenizerSeparatorId = "tokenizer.ggml.seperator_token_id";
inline constexpr std::string_view kTokenizerAddBos = "tokenizer.ggml.add_bos_token";
inline constexpr std::string_view kTokenizerAddEos = "tokenizer.ggml.add_eos_token";
inline constexpr std::string_view kTokenizerAddSpacePrefix = "tokenizer.ggml.add_space_prefix";
inline constexpr std::string_view kChatTemplate = "tokenizer.chat_template";

// Tensors.
inline constexpr std::string_view kTokenEmbd = "token_embd.weight";
inline constexpr std::string_view kOutputNorm = "output_norm.weight";
inline constexpr std::string_view kOutput = "output.weight";
inline constexpr std::string_view kAttnNorm = "blk.{i}.attn_norm.weight";
inline constexpr std::string_view kAttnQ = "blk.{i}.attn_q.weight";
inline constexpr std::string_view kAttnK = "blk.{i}.attn_k.weight";
inline constexpr std::string_view kAttnV = "blk.{i}.attn_v.weight";
inline constexpr std::string_view kAttnQBias = "blk.{i}.attn_q.bias";
inline constexpr std::string_view kAttnKBias = "blk.{i}.attn_k.bias";
inline constexpr std::string_view kAttnVBias = "blk.{i}.attn_v.bias";
inline constexpr std::string_view kAttnOutput = "blk.{i}.attn_output.weight";
inline constexpr std::string_view kFfnNorm = "blk.{i}.ffn_norm.weight";
inline constexpr std::string_view kFfnGate = "blk.{i}.ffn_gate.weight";
inline constexpr std::string_view kFfnUp = "blk.{i}.ffn_up.weight";
inline constexpr std::string_view kFfnDown = "blk.{i}.ffn_down.weight";

// Replaces "{arch}" by `arch` and "{i}" by `layer` in `pattern`.
std::string expand(std::string_view pattern, std::string_view arch, int layer = -1);

// The role of a tensor name: "blk.7.attn_v.weight" -> "attn_v.weight" with layer 7;
// names outside blocks keep their name and layer -1.
struct TensorRole {
  std::string role;
  int layer = -1;
};
TensorRole tensor_role(std::string_view tensor_name);

}  // namespace gguflow::names
