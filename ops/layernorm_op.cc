// The layernorm op: (x - mean) / sqrt(var + eps) * weight + bias, per row (BERT's norm; the
// decoders' rmsnorm has no mean and no bias).
#include "ops/layernorm.h"
#include "ops/op_attrs.h"
#include "ops/op_binder.h"
#include "ops/shape_rules.h"

namespace gguflow::ops {
namespace {

enum : size_t { kX = 0 };                 // inputs
enum : size_t { kGain = 0, kBias = 1 };   // weights

struct LayerNormAttrs {
  double eps = 0;
};

const AttrList<LayerNormAttrs>& attr_list() {
  static const AttrList<LayerNormAttrs> list = AttrList<LayerNormAttrs>().required(
      "eps", &LayerNormAttrs::eps, "added to the variance ({arch}.attention.layer_norm_epsilon)");
  return list;
}

std::string layernorm_shape(const ShapeQuery& q, std::vector<Shape>* out) {
  GGUFLOW_SHAPE_TRY(need_rank(q, false, kX, 2));
  // A non-positive eps divides a constant row by zero (or a negative root): nan everywhere.
  if (const double eps = attr_list().parse(*q.attrs).eps; !(eps > 0))
    return "expected eps > 0, found " + std::to_string(eps);
  const int64_t n = q.inputs[kX]->dims[0];
  for (size_t slot : {kGain, kBias}) {
    if (!q.weights[slot]) continue;
    GGUFLOW_SHAPE_TRY(need_rank(q, true, slot, 1));
    if (q.weights[slot]->dims[0] != n)
      return "expected the weight's length to equal the input's ne0, found " +
             shape_of(q, false, kX) + " and " + shape_of(q, true, slot);
  }
  out->push_back(*q.inputs[kX]);
  return "";
}

BoundOp bind_layernorm(Binder& b) {
  const float eps = static_cast<float>(attr_list().parse(b.attrs()).eps);
  const float* w = b.f32_weight(kGain);
  const float* bias = b.f32_weight(kBias);
  const int64_t n = row_length(*b.input_shape(kX));
  const Parallel& par = b.parallel();
  return {{}, [&par, w, bias, eps, n](const StepView& s, const NodeIo& io) {
            const float* x = at<const float>(s, io.inputs[kX]);
            float* y = at<float>(s, io.outputs[0]);
            parallel_rows(par, s.n_tokens, 16, [&](int64_t r0, int64_t r1) {
              layernorm(x + r0 * n, w, bias, y + r0 * n, r1 - r0, n, eps);
            });
          }};
}

}  // namespace

const OpSchema& layernorm_op() {
  static const OpSchema op{
      "layernorm", OpKind::kNorm,
      "(x - mean) / sqrt(var + eps) * weight + bias over each row (biased variance)",
      {{"x", false, DType::kF32, "[n, T]"}},
      {{"weight", false, "gain [n]"}, {"bias", true, "[n]; absent: 0"}},
      attr_list().specs(),
      {{"out", DType::kF32}},
      "x [n, T], weight [n], bias? [n] -> [n, T]",
      layernorm_shape, bind_layernorm, {}};
  return op;
}

}  // namespace gguflow::ops
