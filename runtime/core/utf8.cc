#include "runtime/core/utf8.h"

#include <cstdio>

#include "ops/error.h"

namespace gguflow::utf8 {

size_t decode_one(std::string_view text, size_t pos, uint32_t* cpt, bool* truncated) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  *truncated = false;
  const uint8_t lead = byte(pos);
  if (lead < 0x80) {
    *cpt = lead;
    return 1;
  }
  size_t length;
  uint32_t value;
  uint32_t min_value;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, value = lead & 0x1F, min_value = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, value = lead & 0x0F, min_value = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, value = lead & 0x07, min_value = 0x10000;
  } else {
    return 0;  // continuation byte, overlong lead 0xC0/0xC1, or 0xF5..0xFF
  }
  for (size_t i = 1; i < length; ++i) {
    if (pos + i >= text.size()) {
      *truncated = true;
      return 0;
    }
    if ((byte(pos + i) & 0xC0) != 0x80) return 0;
    value = (value << 6) | (byte(pos + i) & 0x3F);
    // Reject overlong forms, surrogates and > U+10FFFF as soon as the second byte shows them,
    // so that a truncated prefix is only "incomplete" when some completion is valid.
    if (i == 1) {
      const uint32_t high = value << (6 * (length - 2));
      const uint32_t max_low = (1u << (6 * (length - 2))) - 1;
      if (high + max_low < min_value || (high >= 0xD800 && high <= 0xDFFF) || high > 0x10FFFF)
        return 0;
    }
  }
  *cpt = value;
  return length;
}

std::optional<size_t> find_invalid_utf8(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    uint32_t cpt;
    bool truncated;
    const size_t n = decode_one(text, pos, &cpt, &truncated);
    if (n == 0) return pos;
    pos += n;
  }
  return std::nullopt;
}

void require_valid(std::string_view text, std::string_view what) {
  const std::optional<size_t> bad = find_invalid_utf8(text);
  if (!bad) return;
  const unsigned byte = static_cast<uint8_t>(text[*bad]);
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02X", byte);
  const char* why = byte >= 0x80 && byte <= 0xBF             ? " (a continuation byte with no sequence to continue)"
                    : byte == 0xC0 || byte == 0xC1 || byte >= 0xF5 ? " (a byte UTF-8 never uses)"
                    : byte < 0x80                           ? ""
                                                            : ", which starts a sequence that is cut short, overlong, "
                                                              "a surrogate or above U+10FFFF";
  throw error(what, ": byte offset ", *bad, ": expected valid UTF-8, found byte ", hex, why);
}

}  // namespace gguflow::utf8
