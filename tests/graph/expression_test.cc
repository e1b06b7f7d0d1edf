// The expression language on its own (runtime/graph/expression.h): precedence, comparisons,
// conditionals, sqrt, missing keys, integer edge cases and the nesting limit, through a scope of
// a few params and metadata keys (no model needed).
#include "runtime/graph/expression.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <utility>
#include <string>

#include "ops/error.h"
#include "runtime/graph/spec.h"

namespace gguflow::test {
namespace {

using ::testing::HasSubstr;

class Scope final : public graph::ExprScope {
 public:
  std::map<std::string, ops::AttrValue> params = {
      {"i", int64_t{4}},        {"n_swa", int64_t{16}},    {"n_embd", int64_t{64}},
      {"head_dim", int64_t{25}}, {"rope_base", 1e6},       {"arch", std::string("gemma2")},
      {"big", INT64_MIN},        {"minus_one", int64_t{-1}}};
  std::map<std::string, ops::AttrValue> keys = {{"gemma2.attention.sliding_window", int64_t{16}}};

  graph::ExprValue param(const std::string& name, const graph::Location& where) override {
    auto it = params.find(name);
    if (it == params.end()) graph::fail_at(where, "expected a param name, found '", name, "'");
    return {false, {}, it->second};
  }
  graph::ExprValue metadata(const std::string& key, const graph::Location&) override {
    auto it = keys.find(key);
    if (it == keys.end()) return {true, "metadata key '" + key + "'", {}};
    return {false, {}, it->second};
  }
  graph::ExprValue tensor_dim(const std::string&, int64_t axis, const graph::Location&) override {
    return {false, {}, int64_t{100 + axis}};
  }
};

const graph::Location kWhere{"g.yaml", 3, 9};

graph::ExprValue eval(const std::string& text) {
  Scope scope;
  return graph::evaluate_expression(text, scope, kWhere);
}
int64_t int_of(const std::string& text) { return std::get<int64_t>(eval(text).value); }
double float_of(const std::string& text) { return std::get<double>(eval(text).value); }
// Each expression evaluates to the integer beside it.
void expect_ints(std::initializer_list<std::pair<const char*, int64_t>> cases) {
  for (const auto& [text, want] : cases) EXPECT_EQ(int_of(text), want) << text;
}
std::string error_of(const std::string& text) {
  try {
    eval(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Expression, ComparisonsGiveOneOrZero) {
  expect_ints({
      {"3 == 3", 1}, {"3 != 3", 0}, {"2 < 3", 1}, {"3 < 3", 0}, {"3 <= 3", 1}, {"4 <= 3", 0},
      {"4 > 3", 1}, {"3 > 3", 0}, {"3 >= 3", 1}, {"2 >= 3", 0}
  });
  // Numbers compare as numbers, int with float; large ints exactly.
  expect_ints({
      {"3 == 3.0", 1}, {"2.5 < 3", 1}, {"9007199254740993 > 9007199254740992", 1}
  });
  // Strings with == and != only.
  expect_ints({
      {"arch == 'gemma2'", 1}, {"arch != 'gemma2'", 0}, {"'a' == 'b'", 0}
  });
  EXPECT_THAT(error_of("arch < 'z'"),
              HasSubstr("expected numbers on both sides of '<', found 'gemma2' and 'z'"));
  EXPECT_THAT(error_of("arch == 1"),
              HasSubstr("expected two numbers or two strings on the sides of '==', found 'gemma2' and '1'"));
}

TEST(Expression, Precedence) {
  // Arithmetic binds tighter than ??, ?? tighter than comparisons, comparisons than ?:.
  expect_ints({
      {"1 + 2 * 3 == 7", 1}, {"i % 2 == 0", 1}, {"missing.key ?? 5 == 5", 1},
      {"1 < 2 ? 10 : 20", 10}, {"1 + 1 == 3 ? 10 : 20 + 1", 21}, {"-2 * 3", -6}
  });
  // No chained comparisons: parentheses say what is meant.
  EXPECT_THAT(error_of("1 < 2 < 3"), HasSubstr("at character 7: expected one comparison (write (a < b) < c), found '<'"));
  EXPECT_EQ(int_of("(1 < 2) < 3"), 1);
}

TEST(Expression, ConditionalsNestToTheRight) {
  expect_ints({
      {"i % 2 == 0 ? n_swa : 0", 16},  // gemma2: even layers slide
      {"1 ? 2 : 0 ? 3 : 4", 2}, {"0 ? 2 : 0 ? 3 : 4", 4}, {"0 ? 2 : 1 ? 3 : 4", 3},
      {"1 ? 0 ? 5 : 6 : 7", 6},  // a ? (b ? c : d) : e
      {"(0 ? 1 : 2) + 1", 3}
  });
  EXPECT_DOUBLE_EQ(float_of("(i + 1) % 6 != 0 ? 10000.0 : rope_base"), 10000.0);  // gemma3
  EXPECT_EQ(int_of("0.5 ? 1 : 2"), 1);  // a float condition: non-zero is true
  EXPECT_THAT(error_of("arch ? 1 : 2"), HasSubstr("expected a number as the condition before '?', found 'gemma2'"));
}

TEST(Expression, OnlyTheChosenBranchIsComputed) {
  // The other branch's missing key, division by zero or type error does not matter...
  expect_ints({
      {"1 ? 2 : missing.key", 2}, {"0 ? missing.key : 3", 3}, {"i == 0 ? 0 : 12 / i", 3},
      {"i != 0 ? 1 : 12 / (i - 4)", 1}, {"1 ? 1 : arch * 2", 1}
  });
  // ...but the chosen branch's does, and a misspelt name is an error in either branch.
  const graph::ExprValue m = eval("0 ? 2 : missing.key");
  EXPECT_TRUE(m.missing);
  EXPECT_EQ(m.missing_what, "metadata key 'missing.key'");
  EXPECT_TRUE(eval("missing.key ? 1 : 2").missing);
  EXPECT_TRUE(eval("missing.key ? 1 / 0 : 2").missing);
  EXPECT_THAT(error_of("1 ? 2 : n_swaa"), HasSubstr("expected a param name, found 'n_swaa'"));
}

TEST(Expression, Sqrt) {
  EXPECT_DOUBLE_EQ(float_of("sqrt(n_embd)"), 8.0);
  EXPECT_DOUBLE_EQ(float_of("1.0 / sqrt(head_dim)"), 0.2);
  EXPECT_DOUBLE_EQ(float_of("sqrt(2)"), std::sqrt(2.0));
  EXPECT_TRUE(eval("sqrt(missing.key)").missing);
  EXPECT_EQ(int_of("dim(t.weight, 1)"), 101);
  EXPECT_THAT(error_of("sqrt(0 - 4)"), HasSubstr("expected a non-negative argument of sqrt, found -4"));
  EXPECT_THAT(error_of("sqrt('x')"), HasSubstr("expected a number as the argument of sqrt, found 'x'"));
  EXPECT_THAT(error_of("sqrt(4"), HasSubstr("expected ')' after the argument of sqrt, found the end"));
  EXPECT_THAT(error_of("2 * cbrt(8)"),
              HasSubstr("at character 5: expected a function dim(TENSOR, AXIS) or sqrt(X) before '(', found 'cbrt('"));
}

TEST(Expression, ErrorsSayWhereWhatAndFound) {
  EXPECT_EQ(error_of("i ? 1"),
            "g.yaml:3:9: in expression 'i ? 1' at character 6: expected ':' and the value when the "
            "condition is 0, found the end");
  EXPECT_THAT(error_of("i ? 1 ; 2"), HasSubstr("at character 7: expected ':' and the value when the condition is 0, found ';'"));
  EXPECT_THAT(error_of("i ? : 2"), HasSubstr("at character 5: expected a number, a name, a metadata key or '(', found ':'"));
  EXPECT_THAT(error_of("1 == "), HasSubstr("expected a value, found the end"));
  EXPECT_THAT(error_of("1 = 2"), HasSubstr("expected an operator or the end, found '= 2'"));
}

// issue 23: these trapped with SIGFPE (INT64_MIN / -1, and % -1 computed by the same division).
TEST(Expression, IntegerEdgesAreErrorsOrDefined) {
  EXPECT_THAT(error_of("big / minus_one"),
              HasSubstr("expected a result of '/' within 64-bit integers, found -9223372036854775808 / -1"));
  expect_ints({
      {"big % minus_one", 0}, {"7 % -1", 0},
      {"-7 % 2", -1}  // truncating, as C++
  });
  EXPECT_EQ(int_of("big / 1"), INT64_MIN);
  EXPECT_THAT(error_of("-big"), HasSubstr("expected a result of '-' within 64-bit integers"));
  EXPECT_THAT(error_of("big - 1"), HasSubstr("within 64-bit integers"));
  EXPECT_THAT(error_of("big * 2"), HasSubstr("within 64-bit integers"));
  EXPECT_THAT(error_of("9223372036854775807 + 1"), HasSubstr("within 64-bit integers"));
  EXPECT_THAT(error_of("1 % 0"), HasSubstr("expected a non-zero divisor, found 0"));
}

// issue 23: 100,000 nested parentheses overflowed the stack; nesting stops at 256.
TEST(Expression, NestingDepthIsLimited) {
  auto nested = [](size_t n, const std::string& open, const std::string& close) {
    std::string s;
    for (size_t k = 0; k < n; ++k) s += open;
    s += "1";
    for (size_t k = 0; k < n; ++k) s += close;
    return s;
  };
  EXPECT_EQ(int_of(nested(256, "(", ")")), 1);
  EXPECT_EQ(int_of(nested(256, "-", "")), 1);
  EXPECT_EQ(int_of(nested(128, "1 ? ", " : 0")), 1);
  EXPECT_EQ(int_of(nested(256, "0 ? 1 : ", "")), 1);
  const std::string deep = error_of(nested(100000, "(", ")"));
  EXPECT_THAT(deep, HasSubstr("expected at most 256 nested parentheses, calls, conditionals or signs, found deeper nesting"));
  EXPECT_THAT(deep, HasSubstr("at character 257:"));
  EXPECT_THAT(error_of(nested(100000, "-", "")), HasSubstr("at character 257: expected at most 256 nested"));
  EXPECT_THAT(error_of(nested(300, "0 ? 1 : ", "")), HasSubstr("expected at most 256 nested"));
  EXPECT_THAT(error_of(nested(300, "sqrt(", ")")), HasSubstr("expected at most 256 nested"));
}

}  // namespace
}  // namespace gguflow::test
