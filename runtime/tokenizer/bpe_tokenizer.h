// Byte-level BPE (`tokenizer.ggml.model = gpt2`), as llama.cpp's llm_tokenizer_bpe: split the
// text with the vocabulary's pre-tokenizer, show each word's bytes in GPT-2's byte alphabet,
// then repeatedly merge the adjacent pair with the lowest merge rank (ties: leftmost).
#pragma once

#include <string_view>
#include <vector>

#include "runtime/tokenizer/vocabulary.h"

namespace gguflow {

// Appends the tokens of `text` (valid UTF-8, without special tokens) to `out`.
void bpe_encode(const Vocabulary& vocab, std::string_view text, std::vector<TokenId>& out);

}  // namespace gguflow
