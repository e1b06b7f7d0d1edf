// The scale op: x * factor, elementwise.
#include "ops/op_attrs.h"
#include "ops/op_binder.h"
#include "ops/scale.h"
#include "ops/shape_rules.h"

namespace gguflow::ops {
namespace {

enum : size_t { kX = 0 };  // inputs

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
  const Shape& shape = *b.input_shape(kX);
  const int64_t row = row_length(shape);
  const bool per_token = has_token_dim(shape);
  const GguflowKernels& k = b.kernels();
  return {{}, [&k, factor, row, per_token](const StepView& s, const NodeIo& io) {
            scale(k, at<const float>(s, io.inputs[kX]), at<float>(s, io.outputs[0]),
                  row * (per_token ? s.n_tokens : 1), factor);
          }};
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
