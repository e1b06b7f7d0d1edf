#include "ops/elementwise_unary.h"

#include <utility>

namespace gguflow::ops {

BoundOp bind_elementwise_unary(Binder& b, UnaryFn fn) {
  const Shape shape = *b.input_shape(0);
  // The graph's output of a prompt whose caller keeps only the last row (gemma 2's final logit
  // softcap): that row alone, written as row 0.
  const bool last_row_capable = has_token_dim(shape) && b.writes_graph_output();
  BoundOp bound;
  bound.writes_last_output_only = last_row_capable;
  const Parallel& par = b.parallel();
  bound.run = [&par, fn = std::move(fn), shape, last_row_capable](const StepView& s, const NodeIo& io) {
    const float* x = at<const float>(s, io.inputs[0]);
    float* y = at<float>(s, io.outputs[0]);
    int64_t n = s.elements(shape);
    const int64_t row = row_length(shape);
    if (last_row_capable && s.last_output_only) {
      x += n - row;
      n = row;
    }
    // Row by row, as bind_elementwise_binary: a row's result is the same in any step.
    parallel_elementwise_rows(par, n / row, row, [&](int64_t r0, int64_t r1) {
      for (int64_t i = r0 * row; i < r1 * row; i += row) fn(x + i, y + i, row);
    });
  };
  return bound;
}

}  // namespace gguflow::ops
