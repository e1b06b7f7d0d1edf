#include "runtime/tokenizer/unicode.h"

#include <algorithm>

#include "runtime/core/utf8.h"
#include "runtime/tokenizer/unicode_tables.h"

namespace gguflow::unicode {

CodepointFlags flags_of(uint32_t cpt) {
  if (cpt > 0x10FFFF) return CodepointFlags{CodepointFlags::kUndefined};
  // The last range whose first code point is <= cpt.
  const FlagRange* end = kFlagRanges + kFlagRangeCount;
  const FlagRange* it = std::upper_bound(kFlagRanges, end, cpt,
                                         [](uint32_t c, const FlagRange& r) { return c < r.first; });
  return CodepointFlags{(it - 1)->flags};
}

uint32_t to_lower(uint32_t cpt) {
  if (cpt < 0x80) return (cpt >= 'A' && cpt <= 'Z') ? cpt + ('a' - 'A') : cpt;
  const CodepointPair* end = kLowercase + kLowercaseCount;
  const CodepointPair* it = std::lower_bound(
      kLowercase, end, cpt, [](const CodepointPair& p, uint32_t c) { return p.from < c; });
  return (it != end && it->from == cpt) ? it->to : cpt;
}

uint32_t nfd_first(uint32_t cpt) {
  if (cpt < 0xC0) return cpt;
  const NfdRange* end = kNfdFirst + kNfdFirstCount;
  const NfdRange* it = std::upper_bound(kNfdFirst, end, cpt,
                                        [](uint32_t c, const NfdRange& r) { return c < r.first; });
  if (it == kNfdFirst) return cpt;
  --it;
  return cpt <= it->last ? it->nfd : cpt;
}

size_t utf8_sequence_length(uint8_t lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 1;  // continuation byte or 0xF8..0xFF
}

namespace {

using utf8::decode_one;

}  // namespace

std::vector<uint32_t> decode_utf8(std::string_view text) {
  std::vector<uint32_t> cpts;
  cpts.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    uint32_t cpt;
    bool truncated;
    const size_t n = decode_one(text, pos, &cpt, &truncated);
    if (n == 0) {
      cpts.push_back(kReplacementCharacter);
      ++pos;
    } else {
      cpts.push_back(cpt);
      pos += n;
    }
  }
  return cpts;
}

void append_utf8(uint32_t cpt, std::string& out) {
  if (cpt < 0x80) {
    out += static_cast<char>(cpt);
  } else if (cpt < 0x800) {
    out += static_cast<char>(0xC0 | (cpt >> 6));
    out += static_cast<char>(0x80 | (cpt & 0x3F));
  } else if (cpt < 0x10000) {
    out += static_cast<char>(0xE0 | (cpt >> 12));
    out += static_cast<char>(0x80 | ((cpt >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cpt & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cpt >> 18));
    out += static_cast<char>(0x80 | ((cpt >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cpt >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cpt & 0x3F));
  }
}

size_t incomplete_utf8_suffix(std::string_view text) {
  // A sequence is at most 4 bytes, so only a lead byte in the last 3 can be incomplete.
  for (size_t back = 1; back <= 3 && back <= text.size(); ++back) {
    const size_t pos = text.size() - back;
    const uint8_t byte = static_cast<uint8_t>(text[pos]);
    if ((byte & 0xC0) == 0x80) continue;  // continuation byte: look further back
    uint32_t cpt;
    bool truncated;
    decode_one(text, pos, &cpt, &truncated);
    return truncated ? back : 0;
  }
  return 0;
}

}  // namespace gguflow::unicode
