#include "runtime/tokenizer/wordpiece_tokenizer.h"

#include <algorithm>
#include <string>

#include "runtime/tokenizer/unicode.h"

namespace gguflow {
namespace {

// CJK ideograph blocks that BERT splits into single-character words (the ranges of
// HF tokenizers' BertPreTokenizer, including its 0x2B920 quirk, as llama.cpp copies them).
bool is_chinese_character(uint32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// Normalizes and splits into words (UTF-8).
std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words(1);
  for (uint32_t original : unicode::decode_utf8(text)) {
    const uint32_t cpt = unicode::nfd_first(original);
    const unicode::CodepointFlags flags = unicode::flags_of(cpt);
    if (flags.is_whitespace()) {
      if (!words.back().empty()) words.emplace_back();
      continue;
    }
    if (cpt == 0 || cpt == unicode::kReplacementCharacter || flags.is_control()) continue;
    std::string lowered;
    unicode::append_utf8(unicode::to_lower(cpt), lowered);
    if (flags.is_punctuation() || (cpt < 0x7F && flags.is_symbol()) || is_chinese_character(cpt)) {
      if (!words.back().empty()) words.emplace_back();
      words.back() = std::move(lowered);  // a word of its own
      words.emplace_back();
    } else {
      words.back() += lowered;
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

}  // namespace

void wordpiece_encode(const Vocabulary& vocab, std::string_view text, std::vector<TokenId>& out) {
  for (const std::string& word : split_words(text)) {
    const std::string marked = "\xE2\x96\x81" + word;  // U+2581 marks the start of a word
    const size_t n = marked.size();
    const size_t first_token = out.size();
    for (size_t i = 0; i < n; ++i) {
      bool matched = false;
      for (size_t j = std::min(n, i + vocab.max_token_length() + 1); j > i; --j) {
        const TokenId id = vocab.find(std::string_view(marked).substr(i, j - i));
        if (id != kNoToken) {
          out.push_back(id);
          matched = true;
          i = j - 1;
          break;
        }
      }
      if (!matched) {  // the word cannot be spelled: drop its partial tokens
        out.resize(first_token);
        break;
      }
    }
    if (out.size() == first_token && vocab.unknown() != kNoToken) out.push_back(vocab.unknown());
  }
}

}  // namespace gguflow
