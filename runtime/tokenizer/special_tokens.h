// Splits input text at the text of special tokens before ordinary tokenization, as llama.cpp's
// tokenizer_st_partition: USER_DEFINED tokens (<tool_call>) are always split out; CONTROL and
// UNKNOWN tokens (<|im_start|>, <s>, <unk>) only when `parse_special` is set, and are ordinary
// text otherwise. Longer token texts are searched first.
#pragma once

#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/tokenizer/vocabulary.h"

namespace gguflow {

// A run of the input: either text still to tokenize or one special token.
struct TextFragment {
  TokenId token = kNoToken;  // kNoToken: `text` is ordinary text
  std::string_view text;     // into the input (the token's text for special fragments)
};

// `literal`: byte ranges of `text`, sorted and disjoint, in which CONTROL/UNKNOWN token text is
// not matched (a chat message's content); USER_DEFINED tokens are matched everywhere.
std::vector<TextFragment> split_special_tokens(const Vocabulary& vocab, std::string_view text,
                                               bool parse_special,
                                               std::span<const std::pair<size_t, size_t>> literal = {});

}  // namespace gguflow
