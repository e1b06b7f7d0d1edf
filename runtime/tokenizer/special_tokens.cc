#include "runtime/tokenizer/special_tokens.h"

#include <algorithm>

namespace gguflow {

std::vector<TextFragment> split_special_tokens(const Vocabulary& vocab, std::string_view text,
                                               bool parse_special,
                                               std::span<const std::pair<size_t, size_t>> literal) {
  std::vector<TextFragment> fragments;
  if (text.empty()) return fragments;
  // Whether a match at text[begin, begin + size) touches a literal range. The ranges are sorted
  // and disjoint: a binary search (a chat of 80,000 messages has as many ranges, and twice as
  // many markup matches, each of which a scan of every range took ~60 s of CPU to clear).
  const auto in_literal = [&](const char* begin, size_t size) {
    const size_t start = static_cast<size_t>(begin - text.data()), end = start + size;
    const auto first_ending_after = std::partition_point(
        literal.begin(), literal.end(), [&](const std::pair<size_t, size_t>& r) { return r.second <= start; });
    return first_ending_after != literal.end() && first_ending_after->first < end;
  };
  fragments.push_back(TextFragment{kNoToken, text});
  for (TokenId id : vocab.special_tokens()) {
    const TokenType type = vocab.type(id);
    if (!parse_special && type != TokenType::kUserDefined) continue;
    const std::string& needle = vocab.text(id);
    if (needle.empty()) continue;
    std::vector<TextFragment> next;
    next.reserve(fragments.size());
    for (const TextFragment& fragment : fragments) {
      if (fragment.token != kNoToken) {
        next.push_back(fragment);
        continue;
      }
      const bool control = type != TokenType::kUserDefined;
      std::string_view rest = fragment.text;
      size_t from = 0;  // where the next search in `rest` starts (past a match left as text)
      for (size_t at = rest.find(needle); at != std::string_view::npos; at = rest.find(needle, from)) {
        if (control && in_literal(rest.data() + at, needle.size())) {
          from = at + 1;
          continue;
        }
        if (at > 0) next.push_back(TextFragment{kNoToken, rest.substr(0, at)});
        next.push_back(TextFragment{id, rest.substr(at, needle.size())});
        rest.remove_prefix(at + needle.size());
        from = 0;
      }
      if (!rest.empty()) next.push_back(TextFragment{kNoToken, rest});
    }
    fragments = std::move(next);
  }
  return fragments;
}

}  // namespace gguflow
