// The rmsnorm op: x / sqrt(mean(x^2) + eps) * weight, per row or per group of each row.
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
  int64_t group_size = 0;
};

const AttrList<RmsNormAttrs>& attr_list() {
  static const AttrList<RmsNormAttrs> list =
      AttrList<RmsNormAttrs>()
          .required("eps", &RmsNormAttrs::eps, "added to the mean square")
          .optional("group_size", &RmsNormAttrs::group_size, 0,
                    "values normalised together (each head: $head_dim); 0: the whole row");
  return list;
}

std::string rmsnorm_shape(const ShapeQuery& q, std::vector<Shape>* out) {
  GGUFLOW_SHAPE_TRY(need_rank(q, false, kX, 2));
  const RmsNormAttrs a = attr_list().parse(*q.attrs);
  // A non-positive eps divides a zero row by zero (or takes a negative root): nan everywhere.
  if (!(a.eps > 0)) return "expected eps > 0, found " + std::to_string(a.eps);
  GGUFLOW_SHAPE_TRY(need_rank(q, true, kGain, 1));
  const int64_t group = a.group_size;
  const int64_t n = q.inputs[kX]->dims[0], w = q.weights[kGain]->dims[0];
  if (group == 0) {
    if (n != w)
      return "expected the weight's length to equal the input's ne0, found " +
             shape_of(q, false, kX) + " and " + shape_of(q, true, kGain);
  } else {
    const std::string found = ", found group_size " + std::to_string(group);
    if (group < 0) return "expected group_size >= 0" + found;
    if (n % group != 0)
      return "expected group_size to divide the input's ne0" + found + " and " +
             shape_of(q, false, kX);
    if (w != group)
      return "expected the weight's length to equal group_size" + found + " and " +
             shape_of(q, true, kGain);
  }
  out->push_back(*q.inputs[kX]);
  return "";
}

BoundOp bind_rmsnorm(Binder& b) {
  const RmsNormAttrs a = attr_list().parse(b.attrs());
  const int64_t group = a.group_size;
  const float* w = b.f32_weight(kGain);
  const float eps = static_cast<float>(a.eps);
  const int64_t n = row_length(*b.input_shape(kX));
  const GguflowKernels& k = b.kernels();
  const Parallel& par = b.parallel();
  return {{}, [&k, &par, w, eps, n, group](const StepView& s, const NodeIo& io) {
            const float* x = at<float>(s, io.inputs[kX]);
            float* y = at<float>(s, io.outputs[0]);
            parallel_elementwise_rows(par, s.n_tokens, n, [&](int64_t r0, int64_t r1) {
              rmsnorm(k, x + r0 * n, w, y + r0 * n, r1 - r0, n, eps, group);
            });
          }};
}

}  // namespace

const OpSchema& rmsnorm_op() {
  static const OpSchema op{
      "rmsnorm", OpKind::kNorm,
      "x / sqrt(mean(x^2) + eps) * weight, per row or per group_size values of a row",
      {{"x", false, DType::kF32, "[n, T]"}},
      {{"weight", false, "gain [n], or [group_size]"}},
      attr_list().specs(),
      {{"out", DType::kF32}},
      "x [n, T], weight [n] -> [n, T]; with group_size g: g divides n, weight [g]",
      rmsnorm_shape, bind_rmsnorm, {}};
  return op;
}

}  // namespace gguflow::ops
