#include "runtime/tokenizer/tokenizer.h"

#include <cstdio>

#include "ops/error.h"
#include "runtime/core/utf8.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/tokenizer/bpe_tokenizer.h"
#include "runtime/tokenizer/byte_level.h"
#include "runtime/tokenizer/detokenizer.h"
#include "runtime/tokenizer/special_tokens.h"
#include "runtime/tokenizer/spm_tokenizer.h"
#include "runtime/tokenizer/unicode.h"
#include "runtime/tokenizer/wordpiece_tokenizer.h"

namespace gguflow {
namespace {

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's space

std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(text.size() + text.size() / 2);
  for (size_t pos = 0;;) {
    const size_t at = text.find(from, pos);
    if (at == std::string_view::npos) {
      out.append(text.substr(pos));
      return out;
    }
    out.append(text.substr(pos, at - pos)).append(to);
    pos = at + from.size();
  }
}

}  // namespace

Tokenizer::Tokenizer(Vocabulary vocab)
    : vocab_(std::make_shared<const Vocabulary>(std::move(vocab))) {}

Tokenizer Tokenizer::from_gguf(const GgufFile& file) {
  return Tokenizer(Vocabulary::from_gguf(file));
}

std::vector<TokenId> Tokenizer::encode(std::string_view text, const EncodeOptions& options) const {
  utf8::require_valid(text, "text to tokenize");
  const Vocabulary& v = *vocab_;
  std::vector<TokenId> out;
  out.reserve(text.size() / 2 + 2);
  const bool add_bos = options.add_special && v.add_bos() && v.bos() != kNoToken;
  if (add_bos) out.push_back(v.bos());

  bool previous_is_special = true;  // SentencePiece prefixes a space at the start and after them
  for (const TextFragment& fragment : split_special_tokens(v, text, options.parse_special, options.literal_ranges)) {
    if (fragment.token != kNoToken) {
      out.push_back(fragment.token);
      previous_is_special = true;
      continue;
    }
    switch (v.kind()) {
      case VocabKind::kSentencePiece: {
        std::string spaced = (v.add_space_prefix() && previous_is_special) ? " " : "";
        spaced.append(fragment.text);
        spm_encode(v, replace_all(spaced, " ", kSpmSpace), out);
        break;
      }
      case VocabKind::kBytePairEncoding:
        bpe_encode(v, fragment.text, out);
        break;
      case VocabKind::kWordPiece:
        wordpiece_encode(v, fragment.text, out);
        break;
    }
    previous_is_special = false;
  }
  if (options.add_special) {
    if (v.kind() == VocabKind::kWordPiece) {
      if (v.separator() != kNoToken) out.push_back(v.separator());
    } else if (v.add_eos() && v.eos() != kNoToken) {
      out.push_back(v.eos());
    }
  }
  return out;
}

void Tokenizer::check_id(TokenId id) const {
  if (!vocab_->contains(id))
    throw error("token id ", id, " is out of range: the vocabulary has ", vocab_->size(),
                " tokens (0..", vocab_->size() - 1, ")");
}

std::string Tokenizer::piece(TokenId id, bool render_special) const {
  check_id(id);
  const Vocabulary& v = *vocab_;
  const std::string& text = v.text(id);
  switch (v.type(id)) {
    case TokenType::kControl:
    case TokenType::kUnknown:
      return render_special ? text : std::string();
    case TokenType::kUserDefined:
      return text;
    case TokenType::kByte:
      return std::string(1, static_cast<char>(v.token_byte(id)));
    case TokenType::kNormal:
      switch (v.kind()) {
        case VocabKind::kBytePairEncoding:
          return byte_level::decode(text);
        case VocabKind::kSentencePiece:
        case VocabKind::kWordPiece:
          return replace_all(text, kSpmSpace, " ");
      }
      break;
    case TokenType::kUnused:
    case TokenType::kUndefined:
      break;
  }
  return std::string();
}

std::string Tokenizer::decode(std::span<const TokenId> ids, const DecodeOptions& options) const {
  StreamingDetokenizer stream(*this, options);
  std::string out;
  for (TokenId id : ids) out += stream.push(id);
  out += stream.finish();
  return out;
}

}  // namespace gguflow
