// UTF-8 and Unicode character classes for the tokenizers.
//
// The BPE pre-tokenizers are regular expressions over Unicode classes (\p{L}, \p{N}, \s) that
// std::regex cannot express, so they are written by hand (bpe_pretokenizer.cc) on top of these
// per-code-point flags. The tables are generated (tools/gen_unicode_tables.py); no ICU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gguflow::unicode {

// General category class of a code point (one of the first eight bits) plus White_Space.
struct CodepointFlags {
  enum : uint16_t {
    kUndefined = 1,     // unassigned (Cn)
    kNumber = 2,        // \p{N}
    kLetter = 4,        // \p{L}
    kSeparator = 8,     // \p{Z}
    kMark = 16,         // \p{M}
    kPunctuation = 32,  // \p{P}
    kSymbol = 64,       // \p{S}
    kControl = 128,     // \p{C} other than Cn
    kWhitespace = 256,  // White_Space property, i.e. regex \s
  };
  uint16_t bits = 0;  // 0 only for "no code point" (past the end of a text)

  bool is_letter() const { return bits & kLetter; }
  bool is_number() const { return bits & kNumber; }
  bool is_whitespace() const { return bits & kWhitespace; }
  bool is_punctuation() const { return bits & kPunctuation; }
  bool is_symbol() const { return bits & kSymbol; }
  bool is_control() const { return bits & kControl; }
  bool is_mark() const { return bits & kMark; }
};

inline constexpr uint32_t kReplacementCharacter = 0xFFFD;

CodepointFlags flags_of(uint32_t cpt);
// Simple lowercase (first code point of the full lowercase), e.g. 'A' -> 'a'.
uint32_t to_lower(uint32_t cpt);
// First code point of the canonical decomposition (NFD) of `cpt`: 'é' -> 'e'.
uint32_t nfd_first(uint32_t cpt);

// Length in bytes of the UTF-8 sequence starting with `lead` (1 for continuation/invalid bytes),
// as llama.cpp's unicode_len_utf8: used to cut text into characters without validating it.
size_t utf8_sequence_length(uint8_t lead);

// Decodes valid UTF-8 (checked with utf8::find_invalid_utf8 first, runtime/core/utf8.h);
// invalid bytes become U+FFFD.
std::vector<uint32_t> decode_utf8(std::string_view text);
void append_utf8(uint32_t cpt, std::string& out);

// Number of bytes at the end of `text` that form an incomplete (but so far valid) UTF-8
// sequence: 0..3. A streaming detokenizer holds these back until the character completes.
size_t incomplete_utf8_suffix(std::string_view text);

}  // namespace gguflow::unicode
