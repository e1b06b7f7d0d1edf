// The rmsnorm op: x / sqrt(mean(x^2) + eps) * weight, per row.
#include "ops/op_attrs.h"
#include "ops/op_binder.h"
#include "ops/rmsnorm.h"
#include "ops/shape_rules.h"

namespace gguflow::ops {
namespace {

enum : size_t { kX = 0 };       // inputs
enum : size_t { kGain = 0 };    // weights

struct RmsNormAttrs {
  double eps = 0;
};

const AttrList<RmsNormAttrs>& attr_list() {
  static const AttrList<RmsNormAttrs> list =
      AttrList<RmsNormAttrs>().required("eps", &RmsNormAttrs::eps, "added to the mean square");
  return list;
}

std::string rmsnorm_shape(const ShapeQuery& q, std::vector<Shape>* out) {
  GGUFLOW_SHAPE_TRY(need_rank(q, false, kX, 2));
  GGUFLOW_SHAPE_TRY(need_rank(q, true, kGain, 1));
  if (q.inputs[kX]->dims[0] != q.weights[kGain]->dims[0])
    return "expected the weight's length to equal the input's ne0, found " +
           shape_of(q, false, kX) + " and " + shape_of(q, true, kGain);
  out->push_back(*q.inputs[kX]);
  return "";
}

BoundOp bind_rmsnorm(Binder& b) {
  const RmsNormAttrs a = attr_list().parse(b.attrs());
  const float* w = b.f32_weight(kGain);
  const float eps = static_cast<float>(a.eps);
  const int64_t n = row_length(*b.input_shape(kX));
  const GguflowKernels& k = b.kernels();
  return {{}, [&k, w, eps, n](const StepView& s, const NodeIo& io) {
            rmsnorm(k, at<float>(s, io.inputs[kX]), w, at<float>(s, io.outputs[0]), s.n_tokens, n,
                    eps);
          }};
}

}  // namespace

const OpSchema& rmsnorm_op() {
  static const OpSchema op{
      "rmsnorm", OpKind::kNorm, "x / sqrt(mean(x^2) + eps) * weight, per row",
      {{"x", false, DType::kF32, "[n, T]"}},
      {{"weight", false, "gain [n]"}},
      attr_list().specs(),
      {{"out", DType::kF32}},
      "x [n, T], weight [n] -> [n, T]",
      rmsnorm_shape, bind_rmsnorm, {}};
  return op;
}

}  // namespace gguflow::ops
