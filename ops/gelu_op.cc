// The gelu op: x * Phi(x), elementwise, tanh approximation or exact (erf).
#include "ops/gelu_op.h"

#include "ops/elementwise_unary.h"
#include "ops/shape_rules.h"

namespace gguflow::ops {

constexpr Choice<GeluApprox> kGeluApprox[] = {{"tanh", GeluApprox::kTanh},
                                              {"erf", GeluApprox::kErf}};

const AttrList<GeluAttrs>& gelu_attr_list() {
  static const AttrList<GeluAttrs> list = AttrList<GeluAttrs>().choice(
      "approx", &GeluAttrs::approx, kGeluApprox, GeluApprox::kTanh,
      "tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); erf: 0.5 x (1 + erf(x / sqrt(2)))");
  return list;
}

namespace {

BoundOp bind_gelu(Binder& b) {
  const GeluApprox approx = gelu_attr_list().parse(b.attrs()).approx;
  const GguflowKernels& k = b.kernels();
  return bind_elementwise_unary(b, [&k, approx](const float* x, float* y, int64_t n) {
    gelu(k, x, y, n, approx);
  });
}

}  // namespace

const OpSchema& gelu_op() {
  static const OpSchema op{
      "gelu", OpKind::kActivation, "x * Phi(x), elementwise (tanh approximation or erf), in float",
      {{"x", false, DType::kF32, "[n, T]"}},
      {},
      gelu_attr_list().specs(),
      {{"out", DType::kF32}},
      "x [n, T] -> [n, T]",
      same_shape_unary, bind_gelu, {}};
  return op;
}

}  // namespace gguflow::ops
