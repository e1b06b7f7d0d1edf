// The pool op: one vector from all token rows (embedding graphs), or every row (none).
#include "ops/op_attrs.h"
#include "ops/op_binder.h"
#include "ops/pool.h"
#include "ops/shape_rules.h"

namespace gguflow::ops {
namespace {

enum : size_t { kX = 0 };  // inputs

constexpr Choice<PoolMode> kModes[] = {{"mean", PoolMode::kMean}, {"sum", PoolMode::kSum},
                                       {"last", PoolMode::kLast}, {"first", PoolMode::kFirst},
                                       {"cls", PoolMode::kFirst}, {"none", PoolMode::kNone}};

struct PoolAttrs {
  PoolMode mode = PoolMode::kMean;
};

const AttrList<PoolAttrs>& attr_list() {
  static const AttrList<PoolAttrs> list = AttrList<PoolAttrs>().choice(
      "mode", &PoolAttrs::mode, kModes, PoolMode::kMean,
      "mean, sum, last, first/cls (row 0) or none (all rows)");
  return list;
}

std::string pool_shape(const ShapeQuery& q, std::vector<Shape>* out) {
  GGUFLOW_SHAPE_TRY(need_rank(q, false, kX, 2));
  const Shape& x = *q.inputs[kX];
  out->push_back(attr_list().parse(*q.attrs).mode == PoolMode::kNone ? x : Shape{{x[0], 1}});
  return "";
}

BoundOp bind_pool(Binder& b) {
  const PoolMode mode = attr_list().parse(b.attrs()).mode;
  const int64_t n = row_length(*b.input_shape(kX));
  const GguflowKernels& k = b.kernels();
  // One output row per sequence of the step (a ragged batch pools each text on its own);
  // mode none keeps every token row.
  return {{}, [&k, mode, n](const StepView& s, const NodeIo& io) {
            const float* x = at<const float>(s, io.inputs[kX]);
            float* y = at<float>(s, io.outputs[0]);
            for (int64_t i = 0; i < s.n_sequences; ++i) {
              const StepSequence& seq = s.sequences[i];
              float* yi = mode == PoolMode::kNone ? y + seq.begin * n : y + i * n;
              pool(k, mode, x + seq.begin * n, seq.end - seq.begin, n, yi);
            }
          }};
}

}  // namespace

PoolMode parse_pool_mode(std::string_view name) {
  return choice_value(std::span<const Choice<PoolMode>>(kModes), name, "pool mode");
}

const OpSchema& pool_op() {
  static const OpSchema op{
      "pool", OpKind::kPool, "one vector from all token rows",
      {{"x", false, DType::kF32, "[n, T]"}},
      {},
      attr_list().specs(),
      {{"out", DType::kF32}},
      "x [n, T] -> [n, 1] ([n, T] for mode none)",
      pool_shape, bind_pool, {}};
  return op;
}

}  // namespace gguflow::ops
