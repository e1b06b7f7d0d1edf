// Pieces shape rules share: message text for a slot's shape, rank checks, and the rules of
// ops whose output has the shape of their input(s). Shapes are ne0 first (op_schema.h).
#pragma once

#include <string>
#include <vector>

#include "ops/op_schema.h"

namespace gguflow::ops {

// "input 'h' [64, T]" or "weight 'blk.0.attn_q.weight' [64, 64]".
std::string shape_of(const ShapeQuery& q, bool weight, size_t slot);

// "" when the slot's shape has `rank` dims, else "expected input of rank 2, found ...".
// Every activation is [features, rows]: rank 2.
std::string need_rank(const ShapeQuery& q, bool weight, size_t slot, size_t rank);

// Output = input 0; inputs 0 and 1 of equal shape, rank 2 (add, mul, silu_mul).
std::string same_shape_binary(const ShapeQuery& q, std::vector<Shape>* out);
// Output = input 0, rank 2.
std::string same_shape_unary(const ShapeQuery& q, std::vector<Shape>* out);

}  // namespace gguflow::ops

// Returns the message of a failed check from the enclosing shape rule.
#define GGUFLOW_SHAPE_TRY(expr)             \
  do {                                      \
    if (std::string e = (expr); !e.empty()) \
      return e;                             \
  } while (0)
