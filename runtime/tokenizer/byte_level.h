// GPT-2's byte-level alphabet: each of the 256 byte values is shown as one printable Unicode
// character (printable ASCII and Latin-1 map to themselves, the rest to U+0100..U+0143), so
// that BPE works on text without raw spaces or control bytes: ' ' is 'Ġ' (U+0120).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gguflow::byte_level {

// The character of `byte`, UTF-8 encoded (1 or 2 bytes).
const std::string& encode_byte(uint8_t byte);
// Maps every byte of `bytes` to its character.
std::string encode(std::string_view bytes);
// The inverse of `encode`: characters of the alphabet become their bytes; any other
// character (not produced by `encode`) is kept as its UTF-8.
std::string decode(std::string_view text);

}  // namespace gguflow::byte_level
