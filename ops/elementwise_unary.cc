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
  bound.run = [fn = std::move(fn), shape, last_row_capable](const StepView& s, const NodeIo& io) {
    const float* x = at<const float>(s, io.inputs[0]);
    int64_t n = shape.elements(s.n_tokens);
    if (last_row_capable && s.last_output_only) {
      const int64_t row = shape.elements(1);
      x += n - row;
      n = row;
    }
    fn(x, at<float>(s, io.outputs[0]), n);
  };
  return bound;
}

}  // namespace gguflow::ops
