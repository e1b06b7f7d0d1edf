#include "runtime/tokenizer/detokenizer.h"

#include "runtime/tokenizer/unicode.h"

namespace gguflow {

StreamingDetokenizer::StreamingDetokenizer(const Tokenizer& tokenizer, DecodeOptions options)
    : tokenizer_(tokenizer),
      options_(options),
      strip_next_space_(options.at_sequence_start && tokenizer.vocab().add_space_prefix()) {}

std::string StreamingDetokenizer::push(TokenId id) {
  std::string piece = tokenizer_.piece(id, options_.render_special);
  const Vocabulary& v = tokenizer_.vocab();
  if (strip_next_space_ && !piece.empty() && piece.front() == ' ') piece.erase(0, 1);
  // llama2.c drops the space of the piece right after BOS; llama.cpp that of the first piece.
  strip_next_space_ = v.add_space_prefix() && id == v.bos();

  pending_ += piece;
  const size_t hold = unicode::incomplete_utf8_suffix(pending_);
  std::string ready = pending_.substr(0, pending_.size() - hold);
  pending_.erase(0, pending_.size() - hold);
  return ready;
}

std::string StreamingDetokenizer::finish() {
  std::string rest;
  rest.swap(pending_);
  return rest;
}

}  // namespace gguflow
