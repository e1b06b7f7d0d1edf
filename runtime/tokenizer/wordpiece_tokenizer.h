// WordPiece (`tokenizer.ggml.model = bert`), as llama.cpp's llm_tokenizer_wpm: lowercase,
// strip accents (first code point of NFD), split at whitespace and around punctuation and CJK
// ideographs, then cut each word greedily into the longest vocabulary tokens. GGUF BERT
// vocabularies spell word starts with U+2581 ("▁hello") and continuations bare ("llo", the
// "##" removed), so a word is matched as "▁" + word.
#pragma once

#include <string_view>
#include <vector>

#include "runtime/tokenizer/vocabulary.h"

namespace gguflow {

// Appends the tokens of `text` (valid UTF-8, without special tokens) to `out`; a word that
// cannot be spelled with the vocabulary becomes the unknown token.
void wordpiece_encode(const Vocabulary& vocab, std::string_view text, std::vector<TokenId>& out);

}  // namespace gguflow
