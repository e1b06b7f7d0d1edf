// The silu_mul op: silu(gate) * up, elementwise (the SwiGLU gate of the FFN).
#include "ops/silu_mul.h"
#include "ops/elementwise_binary.h"
#include "ops/shape_rules.h"

namespace gguflow::ops {

const OpSchema& silu_mul_op() {
  static const OpSchema op{
      "silu_mul", OpKind::kActivation, "silu(gate) * up, elementwise",
      {{"gate", false, DType::kF32, "[n, T]"}, {"up", false, DType::kF32, "[n, T]"}},
      {},
      {},
      {{"out", DType::kF32}},
      "gate [n, T], up [n, T] -> [n, T]",
      same_shape_binary, [](Binder& b) { return bind_elementwise_binary(b, silu_mul); }, {}};
  return op;
}

}  // namespace gguflow::ops
