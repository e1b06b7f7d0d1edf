// Decoding one UTF-8 sequence, strictly (RFC 3629): shared by the tokenizers, which validate
// and cut text into characters, and the JSON writer, which must emit valid UTF-8 whatever
// bytes a model produced.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace gguflow::utf8 {

// Decodes the well-formed sequence at text[pos] into *cpt; returns its length in bytes, or 0
// when the bytes there are not one (overlong, surrogate, above U+10FFFF, stray continuation).
// *truncated is true when the text ends inside a sequence that is valid so far.
size_t decode_one(std::string_view text, size_t pos, uint32_t* cpt, bool* truncated);

// Byte offset of the first invalid UTF-8 sequence in `text` (truncated, overlong, surrogate,
// above U+10FFFF, stray continuation byte), or nullopt when the text is valid.
std::optional<size_t> find_invalid_utf8(std::string_view text);

// Throws gguflow::Error "WHAT: byte offset N: expected valid UTF-8, found ..." (what is wrong
// there: a byte UTF-8 never uses, a continuation byte with no sequence, or a sequence cut short,
// overlong, a surrogate or above U+10FFFF) when `text` is not valid UTF-8.
void require_valid(std::string_view text, std::string_view what);

}  // namespace gguflow::utf8
