// The scale op: x * factor, elementwise.
#include "ops/elementwise_unary.h"
#include "ops/op_attrs.h"
#include "ops/scale.h"
#include "ops/shape_rules.h"

namespace gguflow::ops {
namespace {

struct ScaleAttrs {
  double factor = 0;
};

const AttrList<ScaleAttrs>& attr_list() {
  static const AttrList<ScaleAttrs> list = AttrList<ScaleAttrs>().required(
      "factor", &ScaleAttrs::factor, "multiplier, rounded to float (e.g. \"${sqrt(n_embd)}\")");
  return list;
}

BoundOp bind_scale(Binder& b) {
  const float factor = static_cast<float>(attr_list().parse(b.attrs()).factor);
  const GguflowKernels& k = b.kernels();
  return bind_elementwise_unary(b, [&k, factor](const float* x, float* y, int64_t n) {
    scale(k, x, y, n, factor);
  });
}

}  // namespace

const OpSchema& scale_op() {
  static const OpSchema op{
      "scale", OpKind::kElementwise, "x * factor, elementwise (factor rounded to float)",
      {{"x", false, DType::kF32, "[n, T]"}},
      {},
      attr_list().specs(),
      {{"out", DType::kF32}},
      "x [n, T] -> [n, T]",
      same_shape_unary, bind_scale, {}};
  return op;
}

}  // namespace gguflow::ops
