#include "runtime/tokenizer/bpe_pretokenizer.h"

#include "ops/error.h"
#include "runtime/tokenizer/unicode.h"

namespace gguflow {
namespace {

using unicode::CodepointFlags;

// The text as code points with their flags; positions past a segment's end read as "none"
// (code point kEnd, flags 0) so that look-ahead stops at segment boundaries.
class Segment {
 public:
  static constexpr uint32_t kEnd = 0xFFFFFFFF;
  Segment(const std::vector<uint32_t>& cpts, const std::vector<CodepointFlags>& flags,
          size_t begin, size_t end)
      : cpts_(cpts), flags_(flags), begin_(begin), end_(end) {}
  uint32_t cpt(size_t pos) const { return pos >= begin_ && pos < end_ ? cpts_[pos] : kEnd; }
  CodepointFlags flags(size_t pos) const {
    return pos >= begin_ && pos < end_ ? flags_[pos] : CodepointFlags{};
  }
  size_t begin() const { return begin_; }
  size_t end() const { return end_; }

 private:
  const std::vector<uint32_t>& cpts_;
  const std::vector<CodepointFlags>& flags_;
  size_t begin_, end_;
};

// Collects word lengths (in code points) for one segment.
class WordSink {
 public:
  WordSink(std::vector<size_t>& lengths, size_t begin) : lengths_(lengths), previous_end_(begin) {}
  // Ends a word at `end`; returns its length (0 adds nothing).
  size_t add(size_t end) {
    GGUFLOW_CHECK(end >= previous_end_);
    const size_t length = end - previous_end_;
    if (length > 0) lengths_.push_back(length);
    previous_end_ = end;
    return length;
  }

 private:
  std::vector<size_t>& lengths_;
  size_t previous_end_;
};

bool not_space_letter_number(CodepointFlags f) {
  return !(f.is_whitespace() || f.is_letter() || f.is_number()) && f.bits != 0;
}

// 's|'t|'re|'ve|'m|'ll|'d (ASCII case-insensitive when `any_case`): the match length, or 0.
size_t contraction_length(const Segment& s, size_t pos, bool any_case) {
  if (s.cpt(pos) != '\'' || pos + 1 >= s.end()) return 0;
  const auto lower = [&](size_t p) {
    const uint32_t c = s.cpt(p);
    return (any_case && c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
  };
  const uint32_t next = lower(pos + 1);
  if (next == 's' || next == 't' || next == 'm' || next == 'd') return 2;
  if (pos + 2 < s.end()) {
    const uint32_t next2 = lower(pos + 2);
    if ((next == 'r' && next2 == 'e') || (next == 'v' && next2 == 'e') ||
        (next == 'l' && next2 == 'l'))
      return 3;
  }
  return 0;
}

// \s+(?!\S) then \s+ at `pos`, shared by every regex: returns the new position, or `pos` when
// there is no whitespace here.
size_t match_whitespace(const Segment& s, size_t pos, WordSink& sink) {
  size_t count = 0;
  while (s.flags(pos + count).is_whitespace()) ++count;
  if (count > 1 && s.cpt(pos + count) != Segment::kEnd) {
    sink.add(pos + count - 1);  // leave the last space to prefix the next word
    return pos + count - 1;
  }
  if (count > 0) sink.add(pos + count);
  return pos + count;
}

void split_gpt2(const Segment& s, std::vector<size_t>& lengths) {
  WordSink sink(lengths, s.begin());
  for (size_t pos = s.begin(); pos < s.end();) {
    const uint32_t cpt = s.cpt(pos);
    if (const size_t n = contraction_length(s, pos, false)) {
      pos += sink.add(pos + n);
      continue;
    }
    CodepointFlags f = cpt == ' ' ? s.flags(pos + 1) : s.flags(pos);
    if (f.is_letter() || f.is_number() || not_space_letter_number(f)) {
      // ` ?\p{L}+`, ` ?\p{N}+` or ` ?[^\s\p{L}\p{N}]+`: the class of the first character
      // after the optional space decides which.
      const auto same_class = [&](CodepointFlags g) {
        return f.is_letter() ? g.is_letter()
                             : f.is_number() ? g.is_number() : not_space_letter_number(g);
      };
      pos += (cpt == ' ');
      while (same_class(s.flags(pos))) ++pos;
      sink.add(pos);
      continue;
    }
    const size_t after = match_whitespace(s, pos, sink);
    if (after != pos) {
      pos = after;
      continue;
    }
    sink.add(++pos);  // no match: one code point on its own
  }
}

void split_llama3(const Segment& s, size_t max_digits, std::vector<size_t>& lengths) {
  WordSink sink(lengths, s.begin());
  for (size_t pos = s.begin(); pos < s.end();) {
    const uint32_t cpt = s.cpt(pos);
    const CodepointFlags f = s.flags(pos);
    if (const size_t n = contraction_length(s, pos, true)) {
      pos += sink.add(pos + n);
      continue;
    }
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if (!(cpt == '\r' || cpt == '\n' || f.is_number()) &&
        (f.is_letter() || s.flags(pos + 1).is_letter())) {
      ++pos;
      while (s.flags(pos).is_letter()) ++pos;
      sink.add(pos);
      continue;
    }
    // \p{N}{1,max_digits}
    if (f.is_number()) {
      size_t start = pos;
      while (s.flags(pos).is_number()) {
        if (++pos - start >= max_digits) {
          sink.add(pos);
          start = pos;
        }
      }
      sink.add(pos);
      continue;
    }
    // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
    CodepointFlags f2 = cpt == ' ' ? s.flags(pos + 1) : f;
    if (not_space_letter_number(f2)) {
      pos += (cpt == ' ');
      while (not_space_letter_number(s.flags(pos))) ++pos;
      while (s.cpt(pos) == '\r' || s.cpt(pos) == '\n') ++pos;
      sink.add(pos);
      continue;
    }
    // \s*[\r\n]+ : whitespace up to and including its last line break.
    size_t count = 0, after_last_break = 0;
    while (s.flags(pos + count).is_whitespace()) {
      const uint32_t c = s.cpt(pos + count);
      if (c == '\r' || c == '\n') after_last_break = pos + count + 1;
      ++count;
    }
    if (after_last_break > 0) {
      pos = after_last_break;
      sink.add(pos);
      continue;
    }
    const size_t after = match_whitespace(s, pos, sink);
    if (after != pos) {
      pos = after;
      continue;
    }
    sink.add(++pos);
  }
}

// A regex that is a run of one character class (`[class]+`, or exactly `run` characters when
// `run` > 0): matches and the gaps between them both become pieces.
template <typename InClass>
void split_runs(const Segment& s, InClass in_class, size_t run, std::vector<size_t>& lengths) {
  WordSink sink(lengths, s.begin());
  size_t pos = s.begin();
  while (pos < s.end()) {
    if (!in_class(pos)) {
      ++pos;
      continue;
    }
    size_t end = pos;
    while (end < s.end() && in_class(end) && (run == 0 || end - pos < run)) ++end;
    if (run != 0 && end - pos < run) {  // too short for [0-9]{3}: part of the gap
      pos = end;
      continue;
    }
    sink.add(pos);
    sink.add(end);
    pos = end;
  }
  sink.add(s.end());
}

}  // namespace

std::vector<std::string_view> pretokenize(PreTokenizer kind, std::string_view text) {
  GGUFLOW_CHECK(kind != PreTokenizer::kNone);
  const std::vector<uint32_t> cpts = unicode::decode_utf8(text);
  std::vector<CodepointFlags> flags(cpts.size());
  std::vector<size_t> byte_offset(cpts.size() + 1, 0);  // [n_cpts + 1]
  for (size_t i = 0; i < cpts.size(); ++i) {
    flags[i] = unicode::flags_of(cpts[i]);
    const uint32_t c = cpts[i];
    byte_offset[i + 1] = byte_offset[i] + (c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4);
  }
  GGUFLOW_CHECK(byte_offset.back() == text.size());  // callers pass valid UTF-8

  // Each pass turns the current pieces (lengths in code points) into finer ones.
  std::vector<size_t> pieces = {cpts.size()};
  const auto pass = [&](auto&& split_one) {
    std::vector<size_t> next;
    size_t begin = 0;
    for (size_t length : pieces) {
      split_one(Segment(cpts, flags, begin, begin + length), next);
      begin += length;
    }
    pieces = std::move(next);
  };
  if (cpts.empty()) return {};
  switch (kind) {
    case PreTokenizer::kGpt2:
      pass([](const Segment& s, std::vector<size_t>& out) { split_gpt2(s, out); });
      break;
    case PreTokenizer::kLlama3:
      pass([](const Segment& s, std::vector<size_t>& out) { split_llama3(s, 3, out); });
      break;
    case PreTokenizer::kQwen2:
      pass([](const Segment& s, std::vector<size_t>& out) { split_llama3(s, 1, out); });
      break;
    case PreTokenizer::kDefault:
    case PreTokenizer::kNone:
      pass([&](const Segment& s, std::vector<size_t>& out) {
        const auto punctuation_like = [&](size_t p) {
          const uint32_t c = cpts[p];
          return flags[p].is_punctuation() || c == '$' || c == '+' || c == '<' || c == '=' ||
                 c == '>' || c == '^' || c == '~' || c == '|';
        };
        split_runs(s, punctuation_like, 0, out);
      });
      pass([](const Segment& s, std::vector<size_t>& out) { split_gpt2(s, out); });
      pass([&](const Segment& s, std::vector<size_t>& out) {
        split_runs(s, [&](size_t p) { return flags[p].is_number(); }, 0, out);
      });
      pass([&](const Segment& s, std::vector<size_t>& out) {
        split_runs(s, [&](size_t p) { return cpts[p] >= '0' && cpts[p] <= '9'; }, 3, out);
      });
      break;
  }

  std::vector<std::string_view> words;
  words.reserve(pieces.size());
  size_t begin = 0;
  for (size_t length : pieces) {
    words.push_back(text.substr(byte_offset[begin], byte_offset[begin + length] -
                                                        byte_offset[begin]));
    begin += length;
  }
  return words;
}

}  // namespace gguflow
