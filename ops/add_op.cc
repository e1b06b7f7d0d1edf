// The add op: a + b, elementwise (the residual stream).
#include "ops/add.h"
#include "ops/elementwise_binary.h"
#include "ops/shape_rules.h"

namespace gguflow::ops {

const OpSchema& add_op() {
  static const OpSchema op{
      "add", OpKind::kElementwise, "a + b, elementwise",
      {{"a", false, DType::kF32, "[n, T]"}, {"b", false, DType::kF32, "[n, T]"}},
      {},
      {},
      {{"out", DType::kF32}},
      "a [n, T], b [n, T] -> [n, T]",
      same_shape_binary, [](Binder& b) { return bind_elementwise_binary(b, add); }, {}};
  return op;
}

}  // namespace gguflow::ops
