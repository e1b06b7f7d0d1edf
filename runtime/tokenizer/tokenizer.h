// Text <-> token ids for a model, from its GGUF `tokenizer.ggml.*` metadata, matching
// llama.cpp's llama_tokenize / llama_token_to_piece.
//
//   auto file = GgufFile::open("model.gguf");
//   Tokenizer tok = Tokenizer::from_gguf(*file);
//   std::vector<TokenId> ids = tok.encode("Hello");          // BOS added if the model wants it
//   std::string text = tok.decode(ids);                       // "Hello"
//
// Input text must be valid UTF-8: encode() throws gguflow::Error naming the byte offset of the
// first invalid sequence (no silent U+FFFD replacement). Decoding needs no such check: token
// bytes are returned as they are (see detokenizer.h for streaming whole characters).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/tokenizer/vocabulary.h"

namespace gguflow {

class GgufFile;

struct EncodeOptions {
  // Add BOS/EOS as the vocabulary's add_bos/add_eos flags say (WordPiece: CLS ... SEP).
  bool add_special = true;
  // Text of CONTROL tokens (<|im_start|>, <s>) becomes that token; otherwise it is ordinary
  // text. USER_DEFINED tokens are matched either way.
  bool parse_special = false;
  // With parse_special: byte ranges [begin, end) of the text, sorted and disjoint, where CONTROL
  // token text is ordinary text after all (RenderedChat::content: messages inside a chat
  // template's markup).
  std::span<const std::pair<size_t, size_t>> literal_ranges = {};
};

struct DecodeOptions {
  // Render CONTROL/UNKNOWN tokens (<s>, <|im_end|>) as their text; otherwise they print nothing.
  bool render_special = false;
  // The ids begin a sequence: with a space-prefixing (SentencePiece) vocabulary the leading
  // space of the first piece, and of any piece right after BOS, is dropped, as llama2.c and
  // llama.cpp's llama_detokenize do. Set false when decoding a continuation.
  bool at_sequence_start = true;
};

class Tokenizer {
 public:
  explicit Tokenizer(Vocabulary vocab);
  // Throws gguflow::Error when the file's tokenizer metadata is missing or unsupported.
  static Tokenizer from_gguf(const GgufFile& file);

  const Vocabulary& vocab() const { return *vocab_; }
  size_t vocab_size() const { return vocab_->size(); }

  std::vector<TokenId> encode(std::string_view text, const EncodeOptions& options = {}) const;

  // The bytes of one token (may be part of a UTF-8 character: byte tokens, byte-level BPE).
  // Throws gguflow::Error naming the id and the vocabulary size when `id` is out of range.
  std::string piece(TokenId id, bool render_special = false) const;
  // All pieces concatenated, with the leading-space rule of DecodeOptions.
  std::string decode(std::span<const TokenId> ids, const DecodeOptions& options = {}) const;

  // Throws gguflow::Error "token id X is out of range: the vocabulary has N tokens (0..N-1)".
  void check_id(TokenId id) const;

 private:
  std::shared_ptr<const Vocabulary> vocab_;  // shared so copies of a Tokenizer are cheap
};

}  // namespace gguflow
