// The normalize op: scales each row to unit L2 norm (embedding graphs), or copies it (none).
#include "ops/normalize.h"
#include "ops/op_attrs.h"
#include "ops/op_binder.h"
#include "ops/shape_rules.h"

namespace gguflow::ops {
namespace {

enum : size_t { kX = 0 };  // inputs

constexpr Choice<NormalizeMode> kModes[] = {{"l2", NormalizeMode::kL2},
                                            {"none", NormalizeMode::kNone}};

struct NormalizeAttrs {
  NormalizeMode mode = NormalizeMode::kL2;
};

const AttrList<NormalizeAttrs>& attr_list() {
  static const AttrList<NormalizeAttrs> list = AttrList<NormalizeAttrs>().choice(
      "mode", &NormalizeAttrs::mode, kModes, NormalizeMode::kL2, "l2 or none");
  return list;
}

BoundOp bind_normalize(Binder& b) {
  const NormalizeMode mode = attr_list().parse(b.attrs()).mode;
  const Shape shape = *b.input_shape(kX);
  // Rows are of ne0 values; a [n, 1] input is one row per step, a [n, T] input T rows.
  const int64_t n = shape.dims.empty() || shape.dims[0] == kTokenDim ? 1 : shape.dims[0];
  const int64_t rows_per_token = row_length(shape) / n;
  const bool per_token = has_token_dim(shape);
  const GguflowKernels& k = b.kernels();
  return {{}, [&k, mode, n, rows_per_token, per_token](const StepView& s, const NodeIo& io) {
            normalize(k, mode, at<const float>(s, io.inputs[kX]), at<float>(s, io.outputs[0]),
                      s.rows(per_token) * rows_per_token, n);
          }};
}

}  // namespace

NormalizeMode parse_normalize_mode(std::string_view name) {
  return choice_value(std::span<const Choice<NormalizeMode>>(kModes), name, "normalize mode");
}

const OpSchema& normalize_op() {
  static const OpSchema op{
      "normalize", OpKind::kPool, "scales each row to unit norm",
      {{"x", false, DType::kF32, "[n, R]"}},
      {},
      attr_list().specs(),
      {{"out", DType::kF32}},
      "x [n, R] -> [n, R]",
      same_shape_unary, bind_normalize, {}};
  return op;
}

}  // namespace gguflow::ops
