#include "tests/bench/json_rows.h"

#include <cctype>
#include <cstdlib>
#include <stdexcept>

namespace gguflow::test {
namespace {

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  JsonNode document() {
    JsonNode v = value();
    skip_space();
    if (pos_ != s_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("JSON: " + what + " at offset " + std::to_string(pos_));
  }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool take(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) return ++pos_, true;
    return false;
  }
  void expect(char c) {
    if (!take(c)) fail(std::string("expected '") + c + "'");
  }

  JsonNode value() {
    skip_space();
    if (pos_ >= s_.size()) fail("unexpected end");
    JsonNode v;
    const char c = s_[pos_];
    if (c == '{') {
      v.kind = JsonNode::Kind::kObject;
      ++pos_;
      if (take('}')) return v;
      do {
        skip_space();
        const std::string key = string();
        expect(':');
        v.object[key] = value();
      } while (take(','));
      expect('}');
    } else if (c == '[') {
      v.kind = JsonNode::Kind::kArray;
      ++pos_;
      if (take(']')) return v;
      do v.array.push_back(value());
      while (take(','));
      expect(']');
    } else if (c == '"') {
      v.kind = JsonNode::Kind::kString;
      v.string = string();
    } else if (s_.compare(pos_, 4, "true") == 0 || s_.compare(pos_, 5, "false") == 0) {
      v.kind = JsonNode::Kind::kBool;
      v.boolean = c == 't';
      pos_ += v.boolean ? 4 : 5;
    } else if (s_.compare(pos_, 4, "null") == 0) {
      pos_ += 4;
    } else {
      const char* begin = s_.c_str() + pos_;
      char* end = nullptr;
      v.kind = JsonNode::Kind::kNumber;
      v.number = std::strtod(begin, &end);
      if (end == begin) fail("expected a value");
      pos_ += static_cast<size_t>(end - begin);
    }
    return v;
  }

  std::string string() {
    if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a string");
    ++pos_;
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      char c = s_[pos_++];
      if (c == '\\') {
        if (pos_ >= s_.size()) fail("unterminated escape");
        const char e = s_[pos_++];
        c = e == 'n' ? '\n' : e == 't' ? '\t' : e;  // \" \\ \/ and the rest as themselves
      }
      out += c;
    }
    if (pos_ >= s_.size()) fail("unterminated string");
    ++pos_;
    return out;
  }

  const std::string& s_;
  size_t pos_ = 0;
};

}  // namespace

JsonNode parse_json(const std::string& text) { return Parser(text).document(); }

}  // namespace gguflow::test
