// A recursive-descent JSON reader over one line: objects, arrays, strings, numbers, true, false,
// null (RFC 8259 grammar). Only the requested field's string value is kept.
#include "runtime/embed/json_line.h"

#include <cstdint>

#include "ops/error.h"

namespace gguflow::embed {
namespace {

// Nesting beyond this is refused rather than risking the stack on hostile input.
constexpr int kMaxDepth = 256;

class JsonLineParser {
 public:
  explicit JsonLineParser(std::string_view text) : s_(text) {}

  JsonField parse_object_field(std::string_view key) {
    skip_space();
    if (peek() != '{') fail("a JSON object '{'", describe_here());
    JsonField field;
    parse_object(0, key, &field);
    skip_space();
    if (pos_ != s_.size()) fail("the end of the line after the object", describe_here());
    return field;
  }

 private:
  [[noreturn]] void fail(std::string_view expected, const std::string& found) const {
    throw error("column ", pos_ + 1, ": expected ", expected, ", found ", found);
  }
  std::string describe_here() const {
    if (pos_ >= s_.size()) return "the end of the line";
    const unsigned char c = static_cast<unsigned char>(s_[pos_]);
    if (c < 0x20 || c >= 0x7f) return "byte 0x" + hex(c);
    return std::string("'") + static_cast<char>(c) + "'";
  }
  static std::string hex(unsigned value) {
    const char* digits = "0123456789abcdef";
    return {digits[(value >> 4) & 15], digits[value & 15]};
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool at_end() const { return pos_ >= s_.size(); }
  void skip_space() {
    while (!at_end() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r' || s_[pos_] == '\n'))
      ++pos_;
  }
  void expect(char c, std::string_view what) {
    if (peek() != c || at_end()) fail(what, describe_here());
    ++pos_;
  }

  // Parses any value; when `out` is non-null and the value is a string, decodes it there.
  // Returns the JSON type name of the value.
  const char* parse_value(int depth, std::string* out) {
    if (depth > kMaxDepth) fail("at most 256 nested arrays/objects", "deeper nesting");
    skip_space();
    switch (peek()) {
      case '{': parse_object(depth + 1, {}, nullptr); return "object";
      case '[': parse_array(depth + 1); return "array";
      case '"': parse_string(out); return "string";
      case 't': literal("true"); return "boolean";
      case 'f': literal("false"); return "boolean";
      case 'n': literal("null"); return "null";
      default:
        if (peek() == '-' || (peek() >= '0' && peek() <= '9')) {
          parse_number();
          return "number";
        }
        fail("a JSON value", describe_here());
    }
  }

  void parse_object(int depth, std::string_view key, JsonField* field) {
    expect('{', "'{'");
    skip_space();
    if (peek() == '}') {
      ++pos_;
      return;
    }
    for (;;) {
      skip_space();
      if (peek() != '"') fail("a quoted member name", describe_here());
      std::string name;
      parse_string(&name);
      skip_space();
      expect(':', "':' after the member name");
      const bool wanted = field != nullptr && name == key;
      std::string value;
      const char* type = parse_value(depth, wanted ? &value : nullptr);
      if (wanted) {
        field->found = true;
        field->is_string = std::string_view(type) == "string";
        field->value = field->is_string ? std::move(value) : std::string();
        field->found_type = type;
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}', "',' or '}' in the object");
      return;
    }
  }

  void parse_array(int depth) {
    expect('[', "'['");
    skip_space();
    if (peek() == ']') {
      ++pos_;
      return;
    }
    for (;;) {
      parse_value(depth, nullptr);
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect(']', "',' or ']' in the array");
      return;
    }
  }

  void literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) {
      std::string quoted(1, '\'');
      quoted.append(word);
      quoted += '\'';
      fail(quoted, describe_here());
    }
    pos_ += word.size();
  }

  void parse_number() {
    if (peek() == '-') ++pos_;
    auto digits = [&] {
      const size_t start = pos_;
      while (!at_end() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ - start;
    };
    if (peek() == '0') ++pos_;
    else if (digits() == 0) fail("a digit", describe_here());
    if (peek() == '.') {
      ++pos_;
      if (digits() == 0) fail("a digit after '.'", describe_here());
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (digits() == 0) fail("a digit in the exponent", describe_here());
    }
  }

  unsigned parse_hex4() {
    unsigned v = 0;
    for (int i = 0; i < 4; ++i, ++pos_) {
      const char c = peek();
      unsigned d;
      if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') d = static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') d = static_cast<unsigned>(c - 'A' + 10);
      else fail("4 hex digits after \\u", describe_here());
      v = v * 16 + d;
    }
    return v;
  }

  static void append_utf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  // A string at pos_ (the opening quote); decoded into `out` when non-null.
  void parse_string(std::string* out) {
    expect('"', "'\"'");
    for (;;) {
      if (at_end()) fail("the closing '\"' of the string", "the end of the line");
      const char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return;
      }
      if (static_cast<unsigned char>(c) < 0x20)
        fail("a control character to be escaped in a string", describe_here());
      if (c != '\\') {
        if (out) out->push_back(c);
        ++pos_;
        continue;
      }
      ++pos_;
      const char e = peek();
      ++pos_;
      char plain = 0;
      switch (e) {
        case '"': plain = '"'; break;
        case '\\': plain = '\\'; break;
        case '/': plain = '/'; break;
        case 'b': plain = '\b'; break;
        case 'f': plain = '\f'; break;
        case 'n': plain = '\n'; break;
        case 'r': plain = '\r'; break;
        case 't': plain = '\t'; break;
        case 'u': {
          uint32_t cp = parse_hex4();
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (s_.substr(pos_, 2) != "\\u") fail("a low surrogate \\uDC00-\\uDFFF after a high one", describe_here());
            pos_ += 2;
            const uint32_t low = parse_hex4();
            if (low < 0xDC00 || low > 0xDFFF) fail("a low surrogate \\uDC00-\\uDFFF", "\\u" + hex(low >> 8) + hex(low & 255));
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail("a high surrogate before a low one", "\\u" + hex(cp >> 8) + hex(cp & 255));
          }
          if (cp == 0) fail("text without NUL characters", "\\u0000");
          if (out) append_utf8(cp, out);
          continue;
        }
        default:
          --pos_;
          fail("an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)", describe_here());
      }
      if (out) out->push_back(plain);
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

JsonField json_object_field(std::string_view line, std::string_view key) {
  return JsonLineParser(line).parse_object_field(key);
}

}  // namespace gguflow::embed
