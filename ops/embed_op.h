// The embed op's binding, shared with embed_positions: both look up rows of a table by the ids
// of an i32 input (token ids, or positions), decoded from any weight type.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ops/op_binder.h"

namespace gguflow::ops {

// ids [T] (input 0), table [n, rows] (weight 0) -> [n, T].
std::string row_lookup_shape(const ShapeQuery& q, std::vector<Shape>* out);

// Checks that the kernel table decodes the table's type (an error naming the node), then
// returns the closure writing row ids[t] of weight `table` as output row t.
BoundOp bind_row_lookup(Binder& b, size_t ids_slot, size_t table_slot);

}  // namespace gguflow::ops
