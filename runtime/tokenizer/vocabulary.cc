#include "runtime/tokenizer/vocabulary.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>

#include "ops/error.h"
#include "runtime/core/console.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_names.h"
#include "runtime/tokenizer/byte_level.h"

namespace gguflow {
namespace {

// Tokenizer metadata keys: from the one table (runtime/gguf/gguf_names.h), plus the few it
// does not list yet (llama.cpp's LLM_KV_TOKENIZER_{EOT,MASK,CLS}_ID).
constexpr std::string_view kModelKey = names::kTokenizerModel;
constexpr std::string_view kPreKey = names::kTokenizerPre;
constexpr std::string_view kTokensKey = names::kTokenizerTokens;
constexpr std::string_view kScoresKey = names::kTokenizerScores;
constexpr std::string_view kTokenTypeKey = names::kTokenizerTokenType;
constexpr std::string_view kMergesKey = names::kTokenizerMerges;
constexpr std::string_view kBosKey = names::kTokenizerBosId;
constexpr std::string_view kEosKey = names::kTokenizerEosId;
constexpr std::string_view kUnknownKey = names::kTokenizerUnknownId;
constexpr std::string_view kSeparatorKey = names::kTokenizerSeparatorId;
constexpr std::string_view kPaddingKey = names::kTokenizerPaddingId;
constexpr std::string_view kAddBosKey = names::kTokenizerAddBos;
constexpr std::string_view kAddEosKey = names::kTokenizerAddEos;
constexpr std::string_view kAddSpacePrefixKey = names::kTokenizerAddSpacePrefix;
constexpr std::string_view kEotKey = "tokenizer.ggml.eot_token_id";
constexpr std::string_view kMaskKey = "tokenizer.ggml.mask_token_id";
constexpr std::string_view kClsKey = "tokenizer.ggml.cls_token_id";

// Texts that llama.cpp treats as end of turn / end of generation wherever they occur.
constexpr std::array<std::string_view, 9> kEndOfGenerationTexts = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
    "<|eom_id|>", "<EOT>",      "_<EOT>",  "<|end_of_text|>"};

// An optional id key: absent -> `fallback`; out of range -> kNoToken. Files write -1 (as i32,
// or u32 0xffffffff) for "none"; any other id past the vocabulary is a broken file, said on
// stderr as llama.cpp does (a BOS of 999 in 512 tokens was dropped without a word).
TokenId read_id(const GgufFile& file, std::string_view key, TokenId fallback, size_t n_vocab) {
  const GgufValue* value = file.find(key);
  if (value == nullptr) return fallback;
  const int64_t id = value->as_int(key);
  if (id >= 0 && static_cast<uint64_t>(id) < n_vocab) return static_cast<TokenId>(id);
  if (id != -1 && id != int64_t{0xffffffff}) {
    console::start_stderr_line();
    std::fprintf(stderr, "gguflow: warning: %s: metadata '%.*s' is %lld, outside the vocabulary of %zu tokens: no such token is used\n",
                 file.path().c_str(), static_cast<int>(key.size()), key.data(), static_cast<long long>(id), n_vocab);
  }
  return kNoToken;
}

bool read_bool(const GgufFile& file, std::string_view key, bool fallback) {
  const GgufValue* value = file.find(key);
  return value == nullptr ? fallback : value->as_bool(key);
}

PreTokenizer pre_tokenizer_of(const GgufFile& file, const std::string& pre) {
  if (pre.empty() || pre == "default") return PreTokenizer::kDefault;
  if (pre == "gpt-2" || pre == "gpt2") return PreTokenizer::kGpt2;
  if (pre == "llama-bpe" || pre == "llama3" || pre == "llama-v3") return PreTokenizer::kLlama3;
  if (pre == "qwen2" || pre == "deepseek-r1-qwen") return PreTokenizer::kQwen2;
  throw error(file.path(), ": metadata ", kPreKey,
              ": expected a supported BPE pre-tokenizer (default, gpt-2, llama-bpe, qwen2), found '",
              pre, "'");
}

}  // namespace

Vocabulary Vocabulary::from_gguf(const GgufFile& file) {
  Vocabulary v;
  const GgufValue* model = file.find(kModelKey);
  if (model == nullptr)
    throw error(file.path(), ": metadata ", kModelKey, ": expected a tokenizer model, found none");
  v.model_name_ = std::string(model->as_string(kModelKey));
  if (const GgufValue* pre = file.find(kPreKey)) v.pre_name_ = std::string(pre->as_string(kPreKey));

  const auto tokens = file.get(kTokensKey).as_string_array(kTokensKey);
  const size_t n = tokens.size();
  if (n == 0) throw error(file.path(), ": metadata ", kTokensKey, ": expected tokens, found none");
  v.texts_.reserve(n);
  v.ids_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    v.texts_.emplace_back(tokens[i]);
    v.ids_[v.texts_.back()] = static_cast<TokenId>(i);  // a repeated text maps to its last id
    v.max_token_length_ = std::max(v.max_token_length_, tokens[i].size());
  }

  v.scores_.assign(n, 0.0f);
  if (const GgufValue* scores = file.find(kScoresKey)) {
    const auto values = scores->as_double_array(kScoresKey);
    if (values.size() != n)
      throw error(file.path(), ": metadata ", kScoresKey, ": expected ", n, " scores, found ",
                  values.size());
    for (size_t i = 0; i < n; ++i) v.scores_[i] = static_cast<float>(values[i]);
  }
  v.types_.assign(n, TokenType::kNormal);
  if (const GgufValue* types = file.find(kTokenTypeKey)) {
    const auto values = types->as_int_array(kTokenTypeKey);
    if (values.size() != n)
      throw error(file.path(), ": metadata ", kTokenTypeKey, ": expected ", n, " types, found ",
                  values.size());
    for (size_t i = 0; i < n; ++i) {
      if (values[i] < 0 || values[i] > 6)
        throw error(file.path(), ": metadata ", kTokenTypeKey, "[", i,
                    "]: expected a token type 0..6, found ", values[i]);
      v.types_[i] = static_cast<TokenType>(values[i]);
    }
  }

  // Kind-specific defaults, as llama.cpp's llama_vocab::load applies them.
  TokenId bos = kNoToken, eos = kNoToken, unk = kNoToken, sep = kNoToken, pad = kNoToken,
          mask = kNoToken;
  if (v.model_name_ == "llama") {
    v.kind_ = VocabKind::kSentencePiece;
    bos = 1, eos = 2, unk = 0;
    v.add_bos_ = true;
    v.add_space_prefix_ = true;
  } else if (v.model_name_ == "gpt2") {
    v.kind_ = VocabKind::kBytePairEncoding;
    bos = 11, eos = 11;
    v.pre_ = pre_tokenizer_of(file, v.pre_name_);
    if (v.pre_ == PreTokenizer::kLlama3) v.ignore_merges_ = v.add_bos_ = true;
    const auto merges = file.get(kMergesKey).as_string_array(kMergesKey);
    v.merge_ranks_.reserve(merges.size());
    for (size_t rank = 0; rank < merges.size(); ++rank) {
      const size_t space = merges[rank].find(' ', 1);
      if (space == std::string_view::npos)
        throw error(file.path(), ": metadata ", kMergesKey, "[", rank,
                    "]: expected 'left right', found '", merges[rank], "'");
      v.merge_ranks_.emplace(std::string(merges[rank]), static_cast<int>(rank));
    }
  } else if (v.model_name_ == "bert") {
    v.kind_ = VocabKind::kWordPiece;
    bos = 101, unk = 100, sep = 102, pad = 0, mask = 103;
    v.add_bos_ = true;
  } else {
    throw error(file.path(), ": metadata ", kModelKey,
                ": expected a tokenizer model llama, gpt2 or bert, found '", v.model_name_, "'");
  }
  if (v.kind_ == VocabKind::kWordPiece) bos = read_id(file, kClsKey, bos, n);
  v.bos_ = read_id(file, kBosKey, bos, n);
  v.eos_ = read_id(file, kEosKey, eos, n);
  v.unk_ = read_id(file, kUnknownKey, unk, n);
  v.sep_ = read_id(file, kSeparatorKey, sep, n);
  v.pad_ = read_id(file, kPaddingKey, pad, n);
  v.mask_ = read_id(file, kMaskKey, mask, n);
  v.eot_ = read_id(file, kEotKey, kNoToken, n);
  v.add_bos_ = read_bool(file, kAddBosKey, v.add_bos_);
  v.add_eos_ = read_bool(file, kAddEosKey, v.add_eos_);
  v.add_space_prefix_ = read_bool(file, kAddSpacePrefixKey, v.add_space_prefix_);

  for (std::string_view text : kEndOfGenerationTexts) {
    const TokenId id = v.find(text);
    if (id == kNoToken) continue;
    if (v.eot_ == kNoToken && text != "<|endoftext|>" && text != "<|end_of_text|>") v.eot_ = id;
    v.end_of_generation_.push_back(id);
  }
  for (TokenId id : {v.eos_, v.eot_})
    if (id != kNoToken) v.end_of_generation_.push_back(id);

  v.byte_tokens_.assign(256, kNoToken);
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    if (v.kind_ == VocabKind::kBytePairEncoding) {
      v.byte_tokens_[b] = v.find(byte_level::encode_byte(static_cast<uint8_t>(b)));
      continue;
    }
    const std::string hex = {'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
    TokenId id = v.find(hex);
    if (id == kNoToken) id = v.find(std::string(1, static_cast<char>(b)));
    v.byte_tokens_[b] = id;
  }

  for (size_t i = 0; i < n; ++i) {
    const TokenType t = v.types_[i];
    const std::string& text = v.texts_[i];
    if (t == TokenType::kByte && text.size() != 1 &&
        !(text.size() == 6 && text.starts_with("<0x") && text.back() == '>' &&
          std::isxdigit(static_cast<unsigned char>(text[3])) &&
          std::isxdigit(static_cast<unsigned char>(text[4]))))
      throw error(file.path(), ": metadata ", kTokensKey, "[", i,
                  "]: expected a byte token <0xNN>, found '", text, "'");
    if (t == TokenType::kControl || t == TokenType::kUserDefined || t == TokenType::kUnknown)
      v.special_tokens_.push_back(static_cast<TokenId>(i));
  }
  std::stable_sort(v.special_tokens_.begin(), v.special_tokens_.end(), [&](TokenId a, TokenId b) {
    return v.texts_[a].size() > v.texts_[b].size();
  });
  return v;
}

const std::string& Vocabulary::text(TokenId id) const {
  GGUFLOW_CHECK(contains(id));
  return texts_[id];
}

float Vocabulary::score(TokenId id) const {
  GGUFLOW_CHECK(contains(id));
  return scores_[id];
}

TokenType Vocabulary::type(TokenId id) const {
  GGUFLOW_CHECK(contains(id));
  return types_[id];
}

TokenId Vocabulary::find(std::string_view text) const {
  const auto it = ids_.find(std::string(text));
  return it == ids_.end() ? kNoToken : it->second;
}

int Vocabulary::merge_rank(std::string_view left, std::string_view right) const {
  std::string key;
  key.reserve(left.size() + 1 + right.size());
  key.append(left).append(1, ' ').append(right);
  const auto it = merge_ranks_.find(key);
  return it == merge_ranks_.end() ? -1 : it->second;
}

TokenId Vocabulary::byte_token(uint8_t byte) const { return byte_tokens_[byte]; }

uint8_t Vocabulary::token_byte(TokenId id) const {
  const std::string& t = text(id);
  GGUFLOW_CHECK(type(id) == TokenType::kByte);
  if (t.size() == 6 && t.starts_with("<0x") && t.back() == '>')
    return static_cast<uint8_t>(std::stoul(t.substr(3, 2), nullptr, 16));
  GGUFLOW_CHECK(t.size() == 1);  // byte tokens spelled as the raw byte
  return static_cast<uint8_t>(t[0]);
}

bool Vocabulary::is_end_of_generation(TokenId id) const {
  return id != kNoToken &&
         std::find(end_of_generation_.begin(), end_of_generation_.end(), id) !=
             end_of_generation_.end();
}

}  // namespace gguflow
