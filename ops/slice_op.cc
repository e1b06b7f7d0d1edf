// The slice op: values [offset, offset + length) of every row of x.
#include "ops/op_attrs.h"
#include "ops/op_binder.h"
#include "ops/shape_rules.h"
#include "ops/slice.h"

namespace gguflow::ops {
namespace {

enum : size_t { kX = 0 };  // inputs

struct SliceAttrs {
  int64_t offset = 0;
  int64_t length = 0;
};

const AttrList<SliceAttrs>& attr_list() {
  static const AttrList<SliceAttrs> list =
      AttrList<SliceAttrs>()
          .required("offset", &SliceAttrs::offset, "first value of each row taken, >= 0")
          .required("length", &SliceAttrs::length, "values taken from each row, > 0");
  return list;
}

std::string slice_shape(const ShapeQuery& q, std::vector<Shape>* out) {
  GGUFLOW_SHAPE_TRY(need_rank(q, false, kX, 2));
  const SliceAttrs a = attr_list().parse(*q.attrs);
  const Shape& x = *q.inputs[kX];
  if (a.offset < 0) return "expected offset >= 0, found offset " + std::to_string(a.offset);
  if (a.length <= 0) return "expected length > 0, found length " + std::to_string(a.length);
  if (a.offset > x[0] - a.length)
    return "expected offset + length <= the input's ne0, found offset " + std::to_string(a.offset) +
           " + length " + std::to_string(a.length) + " > " + std::to_string(x[0]) + " of " +
           shape_of(q, false, kX);
  out->push_back(Shape{{a.length, x[1]}});
  return "";
}

BoundOp bind_slice(Binder& b) {
  const SliceAttrs a = attr_list().parse(b.attrs());
  const Shape x = *b.input_shape(kX);
  return {{}, [a, x](const StepView& s, const NodeIo& io) {
            slice(at<const float>(s, io.inputs[kX]), at<float>(s, io.outputs[0]),
                  s.elements(x) / x[0], x[0], a.offset, a.length);
          }};
}

}  // namespace

const OpSchema& slice_op() {
  static const OpSchema op{
      "slice", OpKind::kElementwise, "x[offset : offset + length] of every row (a copy)",
      {{"x", false, DType::kF32, "[n, T]"}},
      {},
      attr_list().specs(),
      {{"out", DType::kF32}},
      "x [n, T] -> [length, T], offset + length <= n",
      slice_shape, bind_slice, {}};
  return op;
}

}  // namespace gguflow::ops
