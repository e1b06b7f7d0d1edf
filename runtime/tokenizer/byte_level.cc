#include "runtime/tokenizer/byte_level.h"

#include <array>
#include <unordered_map>

#include "runtime/tokenizer/unicode.h"

namespace gguflow::byte_level {
namespace {

struct Alphabet {
  std::array<std::string, 256> byte_to_text;
  std::unordered_map<uint32_t, uint8_t> codepoint_to_byte;

  Alphabet() {
    // As GPT-2's bytes_to_unicode(): bytes that are printable keep their code point, the
    // others take U+0100 + n in byte order.
    const auto printable = [](int b) {
      return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    };
    uint32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const uint32_t cpt = printable(b) ? static_cast<uint32_t>(b) : next++;
      unicode::append_utf8(cpt, byte_to_text[b]);
      codepoint_to_byte[cpt] = static_cast<uint8_t>(b);
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet instance;
  return instance;
}

}  // namespace

const std::string& encode_byte(uint8_t byte) { return alphabet().byte_to_text[byte]; }

std::string encode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += encode_byte(static_cast<uint8_t>(c));
  return out;
}

std::string decode(std::string_view text) {
  const Alphabet& a = alphabet();
  std::string out;
  out.reserve(text.size());
  for (uint32_t cpt : unicode::decode_utf8(text)) {
    const auto it = a.codepoint_to_byte.find(cpt);
    if (it != a.codepoint_to_byte.end()) {
      out += static_cast<char>(it->second);
    } else {
      unicode::append_utf8(cpt, out);
    }
  }
  return out;
}

}  // namespace gguflow::byte_level
