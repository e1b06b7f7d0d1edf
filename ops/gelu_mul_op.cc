// The gelu_mul op: gelu(gate) * up, elementwise (the GeGLU gate of the FFN).
#include "ops/elementwise_binary.h"
#include "ops/gelu_mul.h"
#include "ops/gelu_op.h"
#include "ops/shape_rules.h"

namespace gguflow::ops {
namespace {

BoundOp bind_gelu_mul(Binder& b) {
  const GeluApprox approx = gelu_attr_list().parse(b.attrs()).approx;
  const GguflowKernels& k = b.kernels();
  return bind_elementwise_binary(
      b, [&k, approx](const float* gate, const float* up, float* y, int64_t n) {
        gelu_mul(k, gate, up, y, n, approx);
      });
}

}  // namespace

const OpSchema& gelu_mul_op() {
  static const OpSchema op{
      "gelu_mul", OpKind::kActivation, "gelu(gate) * up, elementwise (gelu as the gelu op)",
      {{"gate", false, DType::kF32, "[n, T]"}, {"up", false, DType::kF32, "[n, T]"}},
      {},
      gelu_attr_list().specs(),
      {{"out", DType::kF32}},
      "gate [n, T], up [n, T] -> [n, T]",
      same_shape_binary, bind_gelu_mul, {}};
  return op;
}

}  // namespace gguflow::ops
