// Parameter expressions: the small language of `params:` values and `${...}` attributes.
//
//   expr        := comparison ("?" expr ":" expr)?   cond ? a : b, right-associative; the
//                                                   condition is a number, non-zero = true
//   comparison  := fallback (("==" | "!=" | "<" | "<=" | ">" | ">=") fallback)?
//                                                   1 or 0; numbers as numbers, strings with
//                                                   == and != only; no chains (a < b < c)
//   fallback    := additive ("??" additive)*        a ?? b: b when a is missing (an absent key)
//   additive    := term (("+" | "-") term)*
//   term        := unary (("*" | "/" | "%") unary)*
//   unary       := "-" unary | primary
//   primary     := NUMBER | 'string' | NAME | KEY | dim(TENSOR, AXIS) | sqrt(expr) | "(" expr ")"
//
// Only the branch a conditional takes is computed (the other is parsed and its names looked up,
// so a misspelt name is an error either way; a missing key or a division by zero there is not).
// A missing operand makes a comparison, arithmetic or sqrt missing; a missing condition makes
// the conditional missing. Integer overflow (INT64_MIN / -1 included) is an error; x % -1 is 0.
// At most 256 parentheses, calls, conditionals and signs nest.
//
// NAME is a parameter (or a repeat variable such as `i`); KEY contains a dot and is GGUF metadata,
// with `{arch}` standing for general.architecture (`{arch}.block_count`). Integer arithmetic
// stays integer (division truncates); any float operand makes the result a float; sqrt is float.
#pragma once

#include <string>

#include "runtime/graph/graph.h"

namespace gguflow::graph {

struct ExprValue {
  bool missing = false;
  std::string missing_what;  // e.g. "metadata key 'llama.rope.freq_base'"
  AttrValue value;           // int64, double or string when !missing
};

// What names in an expression refer to.
class ExprScope {
 public:
  virtual ~ExprScope() = default;
  // A parameter or repeat variable. Throws (naming `where`) when there is no such name.
  virtual ExprValue param(const std::string& name, const Location& where) = 0;
  // GGUF metadata after `{arch}` substitution; missing when absent.
  virtual ExprValue metadata(const std::string& key, const Location& where) = 0;
  // The size of a model tensor along `axis` (ne0 = axis 0); missing when the tensor is absent.
  virtual ExprValue tensor_dim(const std::string& tensor, int64_t axis, const Location& where) = 0;
};

// Evaluates `text`. Syntax errors and type errors throw gguflow::Error naming `where`, the
// expression, what was expected and what was found. A missing result is returned, not thrown:
// the caller decides whether a default exists.
ExprValue evaluate_expression(const std::string& text, ExprScope& scope, const Location& where);

// Literal text of a YAML scalar as a number: int64 when it is an integer, double when it is a
// float, nullopt otherwise.
bool parse_number(const std::string& text, AttrValue* out);

}  // namespace gguflow::graph
