// SentencePiece-style tokenization (`tokenizer.ggml.model = llama`), as llama.cpp's
// llm_tokenizer_spm: start from single UTF-8 characters, repeatedly merge the adjacent pair
// whose concatenation is the vocabulary token with the highest score (ties: leftmost), then
// spell any piece that is not a token as byte tokens <0xNN>.
#pragma once

#include <string_view>
#include <vector>

#include "runtime/tokenizer/vocabulary.h"

namespace gguflow {

// Appends the tokens of `text` to `out`. `text` is already escaped: spaces are U+2581 and
// the optional leading space prefix is in place (see Tokenizer::encode).
void spm_encode(const Vocabulary& vocab, std::string_view text, std::vector<TokenId>& out);

}  // namespace gguflow
