// The softcap op: cap * tanh(x / cap), elementwise.
#include "ops/elementwise_unary.h"
#include "ops/op_attrs.h"
#include "ops/shape_rules.h"
#include "ops/softcap.h"

namespace gguflow::ops {
namespace {

struct SoftcapAttrs {
  double cap = 0;
};

const AttrList<SoftcapAttrs>& attr_list() {
  static const AttrList<SoftcapAttrs> list = AttrList<SoftcapAttrs>().required(
      "cap", &SoftcapAttrs::cap, "the bound of |out|, > 0, rounded to float");
  return list;
}

std::string softcap_shape(const ShapeQuery& q, std::vector<Shape>* out) {
  const double cap = attr_list().parse(*q.attrs).cap;
  // As float: a positive double that rounds to 0 would divide by zero.
  if (!(static_cast<float>(cap) > 0.0f))
    return "expected attribute 'cap' > 0, found " + attr_to_string(AttrValue{cap});
  return same_shape_unary(q, out);
}

BoundOp bind_softcap(Binder& b) {
  const float cap = static_cast<float>(attr_list().parse(b.attrs()).cap);
  return bind_elementwise_unary(b, [cap](const float* x, float* y, int64_t n) {
    softcap(x, y, n, cap);
  });
}

}  // namespace

const OpSchema& softcap_op() {
  static const OpSchema op{
      "softcap", OpKind::kActivation, "cap * tanh(x / cap), elementwise, in float: tanh(x * (1/cap)) * cap",
      {{"x", false, DType::kF32, "[n, T]"}},
      {},
      attr_list().specs(),
      {{"out", DType::kF32}},
      "x [n, T] -> [n, T]",
      softcap_shape, bind_softcap, {}};
  return op;
}

}  // namespace gguflow::ops
