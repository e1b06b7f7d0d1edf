// Recursive-descent evaluator for parameter expressions (grammar in expression.h).
#include "runtime/graph/expression.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "runtime/core/checked_math.h"
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

// Nested parentheses, conditionals, signs and function calls allowed in one expression: deeper
// input is refused before the recursion could exhaust the stack.
constexpr int kMaxDepth = 256;

class Parser {
 public:
  Parser(const std::string& text, ExprScope& scope, const Location& where)
      : text_(text), scope_(scope), where_(where) {}

  ExprValue parse() {
    ExprValue v = conditional();
    skip_space();
    if (pos_ != text_.size()) fail("an operator or the end", quoted(std::string_view(text_).substr(pos_)));
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& expected, const std::string& found) {
    // A long expression is shown by its start: the character number says where.
    const std::string shown = text_.size() > 100 ? text_.substr(0, 60) + "..." : text_;
    fail_at(where_, "in expression '", shown, "' at character ", pos_ + 1, ": expected ", expected,
            ", found ", found);
  }

  // One level of nesting for the current recursion (see kMaxDepth).
  class Nest {
   public:
    // `at`: where the nesting construct starts (the error points there).
    Nest(Parser& p, size_t at) : p_(p) {
      if (++p_.depth_ > kMaxDepth) {
        p_.pos_ = at;
        p_.fail("at most " + std::to_string(kMaxDepth) + " nested parentheses, calls, conditionals or signs",
                "deeper nesting");
      }
    }
    ~Nest() { --p_.depth_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;

   private:
    Parser& p_;
  };

  // The branch a conditional does not take is parsed, and its names are looked up (a misspelt
  // param is an error in either branch), but nothing in it is computed: no value, no type or
  // division error, no missing key.
  class Skip {
   public:
    Skip(Parser& p, bool on) : p_(p), on_(on) { p_.skip_ += on_ ? 1 : 0; }
    ~Skip() { p_.skip_ -= on_ ? 1 : 0; }
    Skip(const Skip&) = delete;
    Skip& operator=(const Skip&) = delete;

   private:
    Parser& p_;
    bool on_;
  };
  bool skipping() const { return skip_ > 0; }
  static ExprValue skipped() { return ExprValue{false, {}, int64_t{0}}; }

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

  static bool is_number(const ExprValue& v) {
    return std::holds_alternative<int64_t>(v.value) || std::holds_alternative<double>(v.value);
  }
  static double as_double(const AttrValue& v) {
    if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
    return std::get<double>(v);
  }
  static ExprValue int_value(int64_t v) { return ExprValue{false, {}, v}; }
  static std::string both(const ExprValue& a, const ExprValue& b) {
    return quoted(ops::attr_to_string(a.value)) + " and " + quoted(ops::attr_to_string(b.value));
  }

  // cond ? a : b, right-associative: a ? b : c ? d : e is a ? b : (c ? d : e).
  ExprValue conditional() {
    ExprValue cond = comparison();
    if (!eat("?")) return cond;
    bool take_first = true;
    if (!skipping() && !cond.missing) {
      if (!is_number(cond)) fail("a number as the condition before '?'", quoted(ops::attr_to_string(cond.value)));
      take_first = as_double(cond.value) != 0;
    }
    ExprValue first, second;
    skip_space();
    {
      Nest nest(*this, pos_);
      Skip skip(*this, cond.missing || !take_first);  // a missing condition computes neither
      first = conditional();
    }
    if (!eat(":")) fail("':' and the value when the condition is 0", found_here());
    skip_space();
    {
      Nest nest(*this, pos_);
      Skip skip(*this, take_first);
      second = conditional();
    }
    if (skipping()) return skipped();
    if (cond.missing) return cond;
    return take_first ? first : second;
  }

  ExprValue fallback() {
    ExprValue left = additive();
    while (eat("??")) {
      ExprValue right = additive();
      if (left.missing) left = right;
    }
    return left;
  }

  // a OP b with one of == != < <= > >=; no chains (write (a < b) == 1).
  ExprValue comparison() {
    static constexpr std::string_view kOps[] = {"==", "!=", "<=", ">=", "<", ">"};
    ExprValue a = fallback();
    skip_space();
    for (std::string_view op : kOps) {
      if (!eat(op)) continue;
      ExprValue b = fallback();
      skip_space();
      for (std::string_view next : kOps)
        if (text_.compare(pos_, next.size(), next) == 0)
          fail("one comparison (write (a " + std::string(op) + " b) " + std::string(next) + " c)",
               quoted(next));
      return compare(op, a, b);
    }
    return a;
  }

  ExprValue compare(std::string_view op, const ExprValue& a, const ExprValue& b) {
    if (skipping()) return skipped();
    if (a.missing) return a;
    if (b.missing) return b;
    const bool equality = op == "==" || op == "!=";
    int order = 0;  // sign of a - b
    if (is_number(a) && is_number(b)) {
      if (std::holds_alternative<int64_t>(a.value) && std::holds_alternative<int64_t>(b.value)) {
        const int64_t x = std::get<int64_t>(a.value), y = std::get<int64_t>(b.value);
        order = x < y ? -1 : x > y ? 1 : 0;
      } else {
        const double x = as_double(a.value), y = as_double(b.value);
        order = x < y ? -1 : x > y ? 1 : 0;
      }
    } else if (equality && std::holds_alternative<std::string>(a.value) &&
               std::holds_alternative<std::string>(b.value)) {
      order = std::get<std::string>(a.value) == std::get<std::string>(b.value) ? 0 : 1;
    } else {
      fail(equality ? "two numbers or two strings on the sides of '" + std::string(op) + "'"
                    : "numbers on both sides of '" + std::string(op) + "'",
           both(a, b));
    }
    const bool r = op == "==" ? order == 0 : op == "!=" ? order != 0 : op == "<" ? order < 0
                   : op == "<=" ? order <= 0 : op == ">" ? order > 0 : order >= 0;
    return int_value(r ? 1 : 0);
  }

  ExprValue arithmetic(char op, ExprValue a, ExprValue b) {
    if (skipping()) return skipped();
    if (a.missing) return a;
    if (b.missing) return b;
    if (!is_number(a) || !is_number(b)) fail(std::string("numbers on both sides of '") + op + "'", both(a, b));
    if (std::holds_alternative<int64_t>(a.value) && std::holds_alternative<int64_t>(b.value)) {
      const int64_t x = std::get<int64_t>(a.value), y = std::get<int64_t>(b.value);
      if ((op == '/' || op == '%') && y == 0) fail("a non-zero divisor", "0");
      if (op == '%') return int_value(y == -1 ? 0 : x % y);  // INT64_MIN % -1 would trap
      std::optional<int64_t> r;
      if (op == '+') r = checked_add(x, y);
      else if (op == '-') r = checked_sub(x, y);
      else if (op == '*') r = checked_mul(x, y);
      else if (!(x == INT64_MIN && y == -1)) r = x / y;  // INT64_MIN / -1 would trap (SIGFPE)
      if (!r)
        fail(std::string("a result of '") + op + "' within 64-bit integers", std::to_string(x) + " " + op +
             " " + std::to_string(y));
      return int_value(*r);
    }
    const double x = as_double(a.value), y = as_double(b.value);
    if (op == '%') fail("integers on both sides of '%'", "a float");
    ExprValue r;
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
    skip_space();
    const size_t at = pos_;
    if (eat("-")) {
      Nest nest(*this, at);
      return arithmetic('-', int_value(0), unary());
    }
    return primary();
  }

  static bool word_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '{' || c == '}';
  }

  // The argument list after `name(`: dim(TENSOR, AXIS) or sqrt(X).
  ExprValue call(const std::string& name, size_t name_at) {
    if (name == "sqrt") {
      ExprValue x = conditional();
      if (!eat(")")) fail("')' after the argument of sqrt", found_here());
      if (skipping() || x.missing) return skipping() ? skipped() : x;
      if (!is_number(x)) fail("a number as the argument of sqrt", quoted(ops::attr_to_string(x.value)));
      if (as_double(x.value) < 0) fail("a non-negative argument of sqrt", ops::attr_to_string(x.value));
      ExprValue r;
      r.value = std::sqrt(as_double(x.value));
      return r;
    }
    if (name != "dim") {
      pos_ = name_at;
      fail("a function dim(TENSOR, AXIS) or sqrt(X) before '('", quoted(name + "("));
    }
    skip_space();
    size_t t_end = pos_;
    while (t_end < text_.size() && word_char(text_[t_end])) ++t_end;
    const std::string tensor = text_.substr(pos_, t_end - pos_);
    if (tensor.empty()) fail("a tensor name", found_here());
    pos_ = t_end;
    if (!eat(",")) fail("',' and an axis", found_here());
    ExprValue axis = conditional();
    if (!eat(")")) fail("')'", found_here());
    if (skipping()) return skipped();
    if (axis.missing) return axis;
    if (!std::holds_alternative<int64_t>(axis.value)) fail("an integer axis", ops::attr_to_string(axis.value));
    return scope_.tensor_dim(tensor, std::get<int64_t>(axis.value), where_);
  }

  ExprValue primary() {
    skip_space();
    if (pos_ >= text_.size()) fail("a value", "the end");
    const char c = text_[pos_];
    const size_t at = pos_;
    if (eat("(")) {
      Nest nest(*this, at);
      ExprValue v = conditional();
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
    const size_t word_at = pos_;
    pos_ = end;
    if (eat("(")) {
      Nest nest(*this, word_at);
      return call(word, word_at);
    }
    if (word.find('.') != std::string::npos) return skipping() ? skipped() : scope_.metadata(word, where_);
    // `{arch}` alone is the parameter `arch`. A name is looked up even in a skipped branch, so
    // that a misspelling is an error whichever branch is taken.
    const std::string name =
        word.size() > 2 && word.front() == '{' && word.back() == '}' ? word.substr(1, word.size() - 2) : word;
    ExprValue v = scope_.param(name, where_);
    return skipping() ? skipped() : v;
  }

  const std::string& text_;
  ExprScope& scope_;
  const Location& where_;
  size_t pos_ = 0;
  int depth_ = 0;
  int skip_ = 0;
};

}  // namespace

ExprValue evaluate_expression(const std::string& text, ExprScope& scope, const Location& where) {
  return Parser(text, scope, where).parse();
}

}  // namespace gguflow::graph
