// A tokenizer vocabulary read from a GGUF file's `tokenizer.ggml.*` metadata: token texts,
// scores, types, BPE merge ranks, special token ids and the add-BOS/EOS flags, with the
// defaults llama.cpp applies when a key is absent (a SentencePiece vocabulary adds BOS).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gguflow {

class GgufFile;

using TokenId = int32_t;
inline constexpr TokenId kNoToken = -1;

// `tokenizer.ggml.token_type` values (llama.cpp's llama_token_type).
enum class TokenType : uint8_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,      // <s>, <|im_start|>: text in the input is matched only with parse_special
  kUserDefined = 4,  // added tokens whose text is always matched (<tool_call>)
  kUnused = 5,
  kByte = 6,  // <0xNN> byte fallback
};

// `tokenizer.ggml.model`.
enum class VocabKind {
  kSentencePiece,     // "llama": score-driven merges, byte fallback, U+2581 for spaces
  kBytePairEncoding,  // "gpt2": ranked merges over byte-level text, regex pre-tokenizer
  kWordPiece,         // "bert": greedy longest match per word
};

// `tokenizer.ggml.pre` for BPE vocabularies: which pre-tokenizer regex splits the text.
enum class PreTokenizer {
  kNone,     // SentencePiece / WordPiece
  kDefault,  // "default" or absent: llama.cpp's default list of four regexes
  kGpt2,     // "gpt-2"
  kLlama3,   // "llama-bpe", "llama3": \p{N}{1,3}
  kQwen2,    // "qwen2": the llama-3 regex with single digits
};

class Vocabulary {
 public:
  // Throws gguflow::Error naming the file and key when the tokenizer metadata is missing or
  // inconsistent (e.g. scores and tokens of different lengths, an unknown model or pre).
  static Vocabulary from_gguf(const GgufFile& file);

  VocabKind kind() const { return kind_; }
  PreTokenizer pre_tokenizer() const { return pre_; }
  const std::string& model_name() const { return model_name_; }  // "llama", "gpt2", "bert"
  const std::string& pre_name() const { return pre_name_; }      // "" when absent

  size_t size() const { return texts_.size(); }
  bool contains(TokenId id) const { return id >= 0 && static_cast<size_t>(id) < texts_.size(); }
  // Per-token data; `id` must be valid (checked).
  const std::string& text(TokenId id) const;
  float score(TokenId id) const;
  TokenType type(TokenId id) const;
  // The id whose text is exactly `text` (the last one when a text repeats), or kNoToken.
  TokenId find(std::string_view text) const;
  // Rank of the BPE merge "left right" (lower merges first), or -1.
  int merge_rank(std::string_view left, std::string_view right) const;
  // The token of a raw byte: SentencePiece <0xNN> (or the one-byte text), for BPE the
  // byte-level character; kNoToken when the vocabulary has none.
  TokenId byte_token(uint8_t byte) const;
  // The byte of a kByte token (<0xNN>).
  uint8_t token_byte(TokenId id) const;
  size_t max_token_length() const { return max_token_length_; }  // bytes

  // Special ids (kNoToken when the vocabulary has none).
  TokenId bos() const { return bos_; }
  TokenId eos() const { return eos_; }
  TokenId eot() const { return eot_; }
  TokenId unknown() const { return unk_; }
  TokenId separator() const { return sep_; }
  TokenId padding() const { return pad_; }
  TokenId mask() const { return mask_; }
  bool add_bos() const { return add_bos_; }
  bool add_eos() const { return add_eos_; }
  // SentencePiece: a space is put before the text (and dropped again when decoding).
  bool add_space_prefix() const { return add_space_prefix_; }
  // llama-3 BPE: a pre-token that is itself a token is taken whole, without merging.
  bool ignore_merges() const { return ignore_merges_; }
  // Generation stops at these: EOS, EOT and the control tokens llama.cpp treats as
  // end-of-generation by their text (<|im_end|>, <|eot_id|>, <|endoftext|>, ...).
  bool is_end_of_generation(TokenId id) const;
  const std::vector<TokenId>& end_of_generation() const { return end_of_generation_; }
  // CONTROL, USER_DEFINED and UNKNOWN tokens, longest text first (ties: lower id first): the
  // order in which their text is searched for in the input.
  const std::vector<TokenId>& special_tokens() const { return special_tokens_; }

 private:
  VocabKind kind_ = VocabKind::kSentencePiece;
  PreTokenizer pre_ = PreTokenizer::kNone;
  std::string model_name_, pre_name_;
  std::vector<std::string> texts_;  // [n_vocab]
  std::vector<float> scores_;       // [n_vocab]; 0 when the file has none
  std::vector<TokenType> types_;    // [n_vocab]
  std::unordered_map<std::string, TokenId> ids_;
  std::unordered_map<std::string, int> merge_ranks_;  // key: "left right"
  std::vector<TokenId> byte_tokens_;                  // [256], kNoToken where absent
  std::vector<TokenId> special_tokens_;
  std::vector<TokenId> end_of_generation_;
  size_t max_token_length_ = 0;
  TokenId bos_ = kNoToken, eos_ = kNoToken, eot_ = kNoToken, unk_ = kNoToken;
  TokenId sep_ = kNoToken, pad_ = kNoToken, mask_ = kNoToken;
  bool add_bos_ = false, add_eos_ = false, add_space_prefix_ = false, ignore_merges_ = false;
};

}  // namespace gguflow
