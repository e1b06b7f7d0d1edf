#include "ops/shape_rules.h"

namespace gguflow::ops {

std::string shape_of(const ShapeQuery& q, bool weight, size_t slot) {
  const auto& names = weight ? q.weight_names : q.input_names;
  const Shape* s = weight ? q.weights[slot] : q.inputs[slot];
  return std::string(weight ? "weight '" : "input '") + names[slot] + "' " + s->to_string();
}

std::string need_rank(const ShapeQuery& q, bool weight, size_t slot, size_t rank) {
  const Shape* s = weight ? q.weights[slot] : q.inputs[slot];
  if (s->rank() == rank) return "";
  return "expected " + std::string(weight ? "weight" : "input") + " of rank " + std::to_string(rank) +
         ", found " + shape_of(q, weight, slot);
}

std::string same_shape_binary(const ShapeQuery& q, std::vector<Shape>* out) {
  GGUFLOW_SHAPE_TRY(need_rank(q, false, 0, 2));
  if (*q.inputs[0] != *q.inputs[1])
    return "expected equal shapes, found " + shape_of(q, false, 0) + " and " + shape_of(q, false, 1);
  out->push_back(*q.inputs[0]);
  return "";
}

std::string same_shape_unary(const ShapeQuery& q, std::vector<Shape>* out) {
  GGUFLOW_SHAPE_TRY(need_rank(q, false, 0, 2));
  out->push_back(*q.inputs[0]);
  return "";
}

}  // namespace gguflow::ops
