#include "runtime/tokenizer/special_tokens.h"

namespace gguflow {

std::vector<TextFragment> split_special_tokens(const Vocabulary& vocab, std::string_view text,
                                               bool parse_special) {
  std::vector<TextFragment> fragments;
  if (text.empty()) return fragments;
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
      std::string_view rest = fragment.text;
      for (size_t at = rest.find(needle); at != std::string_view::npos; at = rest.find(needle)) {
        if (at > 0) next.push_back(TextFragment{kNoToken, rest.substr(0, at)});
        next.push_back(TextFragment{id, rest.substr(at, needle.size())});
        rest.remove_prefix(at + needle.size());
      }
      if (!rest.empty()) next.push_back(TextFragment{kNoToken, rest});
    }
    fragments = std::move(next);
  }
  return fragments;
}

}  // namespace gguflow
