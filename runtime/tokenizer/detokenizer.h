// Streaming detokenization for generation: token ids arrive one at a time and text is printed
// as soon as it is whole. A UTF-8 character whose bytes are split across tokens (byte tokens
// <0xE2><0x96><0x81>, or byte-level BPE pieces) is held back until it completes, so a
// terminal never sees half a character.
//
//   StreamingDetokenizer out(tokenizer);
//   for (TokenId id : generated) std::cout << out.push(id) << std::flush;
//   std::cout << out.finish();
//
// When generating after a prompt, either push the prompt ids first (and discard or echo their
// text) or set DecodeOptions::at_sequence_start = false, so that the first generated word keeps
// its leading space.
#pragma once

#include <string>

#include "runtime/tokenizer/tokenizer.h"

namespace gguflow {

class StreamingDetokenizer {
 public:
  // `tokenizer` must outlive this object.
  explicit StreamingDetokenizer(const Tokenizer& tokenizer, DecodeOptions options = {});

  // Appends token `id` (checked: throws gguflow::Error when out of range) and returns the text
  // that is now complete: whole UTF-8 characters only.
  std::string push(TokenId id);
  // Returns whatever is still held back (an unfinished character's bytes, as they are) and
  // resets the hold-back buffer. Call at the end of generation.
  std::string finish();

 private:
  const Tokenizer& tokenizer_;
  DecodeOptions options_;
  bool strip_next_space_;  // drop a leading ' ' of the next piece (sequence start, after BOS)
  std::string pending_;    // bytes of an incomplete UTF-8 character, 0..3 bytes
};

}  // namespace gguflow
