// The op vocabulary: the list of op units, each defined in its own file (ops/<op>_op.cc:
// schema, typed attributes, shape rule, bind/run code). Adding an op is its own files plus one
// line in op_registry.cc; docs/ARCHITECTURE.md "Adding an op" walks through it.
// `gguflow ops` prints the table (slots, attributes, types, defaults, shape rules).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "ops/op_schema.h"

namespace gguflow::ops {

// Every op, in listing order (the order of `gguflow ops`).
std::span<const OpSchema* const> all_ops();
// nullptr when `name` is not an op.
const OpSchema* find_op(std::string_view name);

// The candidate closest to `word` by edit distance, or "" when none is close enough to be a
// plausible misspelling (used for "did you mean" hints).
std::string closest_name(std::string_view word, std::span<const std::string> candidates);

}  // namespace gguflow::ops
