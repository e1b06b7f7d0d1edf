#include "runtime/tools/synth_vocab.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <vector>

#include "ops/error.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_names.h"
#include "runtime/gguf/gguf_writer.h"

namespace gguflow {
namespace {

// llama.cpp's token attribute values (tokenizer.ggml.token_type).
enum TokenType : int32_t { kNormal = 1, kUnknown = 2, kControl = 3, kByte = 6 };

constexpr int64_t kSpecialAndByteTokens = 3 + 256;

}  // namespace

namespace {

const GgufValue& tokens_of(const GgufFile& vocab, const std::string& vocab_path) {
  const GgufValue* tokens = vocab.find(names::kTokenizerTokens);
  if (!tokens)
    throw error(vocab_path, ": no '", names::kTokenizerTokens, "'; expected a tokenizer GGUF");
  return *tokens;
}

}  // namespace

int64_t copy_tokenizer_metadata(const std::string& vocab_path, GgufWriter& writer) {
  auto vocab = GgufFile::open(vocab_path);
  const GgufValue& tokens = tokens_of(*vocab, vocab_path);
  for (const GgufKeyValue& kv : vocab->metadata()) {
    if (kv.key.rfind("tokenizer.", 0) == 0) writer.set(kv.key, kv.value);
  }
  return static_cast<int64_t>(tokens.array_size(names::kTokenizerTokens));
}

int64_t vocab_token_count(const std::string& vocab_path) {
  auto vocab = GgufFile::open(vocab_path);
  return static_cast<int64_t>(tokens_of(*vocab, vocab_path).array_size(names::kTokenizerTokens));
}

void write_placeholder_tokenizer(int64_t n_vocab, const std::string& arch, GgufWriter& writer) {
  // Phi-3's added tokens, in its ids' order from 32000 (Phi-3-mini's tokenizer.json).
  static const char* const kPhi3Added[] = {
      "<|endoftext|>", "<|assistant|>", "<|placeholder1|>", "<|placeholder2|>", "<|placeholder3|>",
      "<|placeholder4|>", "<|system|>", "<|end|>", "<|placeholder5|>", "<|placeholder6|>", "<|user|>"};
  constexpr int64_t kPhi3AddedAt = 32000;
  const bool phi3 = arch == "phi3";
  const int64_t n_added = phi3 ? static_cast<int64_t>(std::size(kPhi3Added)) : 0;
  if (n_vocab < kSpecialAndByteTokens + n_added)
    throw error("placeholder tokenizer: n_vocab ", n_vocab, " is too small; expected at least ",
                kSpecialAndByteTokens + n_added, " (3 special + 256 byte tokens",
                phi3 ? " + Phi-3's 11 added tokens)" : ")");
  const int64_t added_at = std::min(kPhi3AddedAt, n_vocab - n_added);
  std::vector<std::string> tokens;  // [n_vocab]
  std::vector<float> scores;        // [n_vocab]
  std::vector<int32_t> types;       // [n_vocab]
  tokens.reserve(static_cast<size_t>(n_vocab));
  auto add = [&](std::string text, TokenType type) {
    scores.push_back(-static_cast<float>(tokens.size()));
    tokens.push_back(std::move(text));
    types.push_back(type);
  };
  add("<unk>", kUnknown);
  add("<s>", kControl);
  add("</s>", kControl);
  for (int b = 0; b < 256; ++b) {
    char text[8];
    std::snprintf(text, sizeof text, "<0x%02X>", b);
    add(text, kByte);
  }
  // Word pieces: "▁a".."▁z", then numbered ones until n_vocab (Phi-3's added tokens among them).
  const std::string space = "\xE2\x96\x81";  // U+2581, SentencePiece's word boundary
  for (int64_t piece = 0; static_cast<int64_t>(tokens.size()) < n_vocab;) {
    if (n_added > 0 && static_cast<int64_t>(tokens.size()) == added_at) {
      for (const char* t : kPhi3Added) add(t, kControl);
      continue;
    }
    const int64_t i = piece++;
    add(i < 26 ? space + static_cast<char>('a' + i) : space + "w" + std::to_string(i - 26), kNormal);
  }

  writer.set_string(names::kTokenizerModel, "llama");
  writer.set_string(names::kTokenizerPre, "default");
  writer.set_string_array(names::kTokenizerTokens, tokens);
  writer.set_f32_array(names::kTokenizerScores, scores);
  writer.set_i32_array(names::kTokenizerTokenType, types);
  writer.set_u32(names::kTokenizerBosId, 1);
  writer.set_u32(names::kTokenizerEosId, phi3 ? static_cast<uint32_t>(added_at) : 2);  // <|endoftext|>
  writer.set_u32(names::kTokenizerUnknownId, 0);
  writer.set_bool(names::kTokenizerAddBos, true);
  writer.set_bool(names::kTokenizerAddEos, false);
}

}  // namespace gguflow
