// BPE pre-tokenizers: split text into words before merging, as the regexes of GPT-2,
// llama-3 and Qwen2 do. Hand-written matchers (as llama.cpp's unicode.cpp) over the Unicode
// classes of unicode.h, because std::regex has no \p{L}.
//
//   gpt-2:  's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   llama3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
//           | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   qwen2:  the llama3 regex with \p{N} (one digit per word)
//   default: llama.cpp's list [\p{P}\$\+<=>\^~\|]+ , then gpt-2, then \p{N}+, then [0-9]{3},
//            each applied to the pieces of the previous one (unmatched gaps are pieces too).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runtime/tokenizer/vocabulary.h"

namespace gguflow {

// Splits `text` (valid UTF-8) into its pre-tokens, in order; their concatenation is `text`.
std::vector<std::string_view> pretokenize(PreTokenizer kind, std::string_view text);

}  // namespace gguflow
