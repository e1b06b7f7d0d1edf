// Recursive-descent evaluator for parameter expressions (grammar in expression.h).
#include "runtime/graph/expression.h"

#include <cctype>
#include <charconv>
#include <cstdlib>

#include "runtime/graph/spec.h"

namespace gguflow::graph {

bool parse_number(const std::string& text, AttrValue* out) {
  if (text.empty()) return false;
  int64_t i = 0;
  auto [end_i, ec_i] = std::from_chars(text.data(), text.data() + text.size(), i);
  if (ec_i == std::errc() && end_i == text.data() + text.size()) {
    *out = i;
    return true;
  }
  char* end = nullptr;
  double d = std::strtod(text.c_str(), &end);
  const char c = text[0];
  if (end == text.c_str() + text.size() && (std::isdigit(static_cast<unsigned char>(c)) || c == '-' ||
                                            c == '+' || c == '.')) {
    *out = d;
    return true;
  }
  return false;
}

namespace {

// 'text' (built by appending: GCC 12 warns falsely on "literal" + temporary, -Wrestrict).
std::string quoted(std::string_view text) {
  std::string s(1, '\'');
  s.append(text);
  s += '\'';
  return s;
}

class Parser {
 public:
  Parser(const std::string& text, ExprScope& scope, const Location& where)
      : text_(text), scope_(scope), where_(where) {}

  ExprValue parse() {
    ExprValue v = fallback();
    skip_space();
    if (pos_ != text_.size()) fail("an operator or the end", quoted(std::string_view(text_).substr(pos_)));
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& expected, const std::string& found) {
    fail_at(where_, "in expression '", text_, "' at character ", pos_ + 1, ": expected ", expected,
            ", found ", found);
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool eat(std::string_view token) {
    skip_space();
    if (text_.compare(pos_, token.size(), token) != 0) return false;
    pos_ += token.size();
    return true;
  }
  std::string found_here() {
    skip_space();
    return pos_ < text_.size() ? quoted(std::string_view(text_).substr(pos_, 1)) : "the end";
  }

  ExprValue fallback() {
    ExprValue left = additive();
    while (eat("??")) {
      ExprValue right = additive();
      if (left.missing) left = right;
    }
    return left;
  }

  static bool is_number(const ExprValue& v) {
    return std::holds_alternative<int64_t>(v.value) || std::holds_alternative<double>(v.value);
  }
  static double as_double(const AttrValue& v) {
    if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
    return std::get<double>(v);
  }

  ExprValue arithmetic(char op, ExprValue a, ExprValue b) {
    if (a.missing) return a;
    if (b.missing) return b;
    if (!is_number(a) || !is_number(b))
      fail(std::string("numbers on both sides of '") + op + "'",
           quoted(ops::attr_to_string(a.value)) + " and " + quoted(ops::attr_to_string(b.value)));
    ExprValue r;
    if (std::holds_alternative<int64_t>(a.value) && std::holds_alternative<int64_t>(b.value)) {
      const int64_t x = std::get<int64_t>(a.value), y = std::get<int64_t>(b.value);
      if ((op == '/' || op == '%') && y == 0) fail("a non-zero divisor", "0");
      r.value = op == '+' ? x + y : op == '-' ? x - y : op == '*' ? x * y : op == '/' ? x / y : x % y;
      return r;
    }
    const double x = as_double(a.value), y = as_double(b.value);
    if (op == '%') fail("integers on both sides of '%'", "a float");
    r.value = op == '+' ? x + y : op == '-' ? x - y : op == '*' ? x * y : x / y;
    return r;
  }

  ExprValue additive() {
    ExprValue v = term();
    for (;;) {
      skip_space();
      if (text_.compare(pos_, 2, "??") == 0) return v;
      if (eat("+")) v = arithmetic('+', v, term());
      else if (eat("-")) v = arithmetic('-', v, term());
      else return v;
    }
  }

  ExprValue term() {
    ExprValue v = unary();
    for (;;) {
      if (eat("*")) v = arithmetic('*', v, unary());
      else if (eat("/")) v = arithmetic('/', v, unary());
      else if (eat("%")) v = arithmetic('%', v, unary());
      else return v;
    }
  }

  ExprValue unary() {
    if (eat("-")) {
      ExprValue zero;
      zero.value = int64_t{0};
      return arithmetic('-', zero, unary());
    }
    return primary();
  }

  static bool word_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '{' || c == '}';
  }

  ExprValue primary() {
    skip_space();
    if (pos_ >= text_.size()) fail("a value", "the end");
    const char c = text_[pos_];
    if (eat("(")) {
      ExprValue v = fallback();
      if (!eat(")")) fail("')'", found_here());
      return v;
    }
    if (c == '\'') {
      const size_t close = text_.find('\'', pos_ + 1);
      if (close == std::string::npos) fail("a closing quote", "the end");
      ExprValue v;
      v.value = text_.substr(pos_ + 1, close - pos_ - 1);
      pos_ = close + 1;
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      size_t end = pos_;
      while (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])) ||
                                    text_[end] == '.' ||
                                    ((text_[end] == '-' || text_[end] == '+') && end > pos_ &&
                                     (text_[end - 1] == 'e' || text_[end - 1] == 'E'))))
        ++end;
      const std::string number = text_.substr(pos_, end - pos_);
      ExprValue v;
      if (!parse_number(number, &v.value)) fail("a number", quoted(number));
      pos_ = end;
      return v;
    }
    if (!word_char(c)) fail("a number, a name, a metadata key or '('", found_here());
    size_t end = pos_;
    while (end < text_.size() && word_char(text_[end])) ++end;
    const std::string word = text_.substr(pos_, end - pos_);
    pos_ = end;
    if (word == "dim" && eat("(")) {
      skip_space();
      size_t t_end = pos_;
      while (t_end < text_.size() && word_char(text_[t_end])) ++t_end;
      const std::string tensor = text_.substr(pos_, t_end - pos_);
      if (tensor.empty()) fail("a tensor name", found_here());
      pos_ = t_end;
      if (!eat(",")) fail("',' and an axis", found_here());
      ExprValue axis = fallback();
      if (!eat(")")) fail("')'", found_here());
      if (axis.missing) return axis;
      if (!std::holds_alternative<int64_t>(axis.value)) fail("an integer axis", ops::attr_to_string(axis.value));
      return scope_.tensor_dim(tensor, std::get<int64_t>(axis.value), where_);
    }
    if (word.find('.') != std::string::npos) return scope_.metadata(word, where_);
    // `{arch}` alone is the parameter `arch`.
    if (word.size() > 2 && word.front() == '{' && word.back() == '}')
      return scope_.param(word.substr(1, word.size() - 2), where_);
    return scope_.param(word, where_);
  }

  const std::string& text_;
  ExprScope& scope_;
  const Location& where_;
  size_t pos_ = 0;
};

}  // namespace

ExprValue evaluate_expression(const std::string& text, ExprScope& scope, const Location& where) {
  return Parser(text, scope, where).parse();
}

}  // namespace gguflow::graph
