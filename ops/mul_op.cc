// The mul op: a * b, elementwise (gates, scales).
#include "ops/mul.h"
#include "ops/elementwise_binary.h"
#include "ops/shape_rules.h"

namespace gguflow::ops {

const OpSchema& mul_op() {
  static const OpSchema op{
      "mul", OpKind::kElementwise, "a * b, elementwise",
      {{"a", false, DType::kF32, "[n, T]"}, {"b", false, DType::kF32, "[n, T]"}},
      {},
      {},
      {{"out", DType::kF32}},
      "a [n, T], b [n, T] -> [n, T]",
      same_shape_binary, [](Binder& b) { return bind_elementwise_binary(b, mul); }, {}};
  return op;
}

}  // namespace gguflow::ops
