#include "ops/elementwise_unary.h"

#include <utility>

namespace gguflow::ops {

BoundOp bind_elementwise_unary(Binder& b, UnaryFn fn) {
  const Shape& shape = *b.input_shape(0);
  const int64_t row = row_length(shape);
  const bool per_token = has_token_dim(shape);
  return {{}, [fn = std::move(fn), row, per_token](const StepView& s, const NodeIo& io) {
            fn(at<const float>(s, io.inputs[0]), at<float>(s, io.outputs[0]),
               row * (per_token ? s.n_tokens : 1));
          }};
}

}  // namespace gguflow::ops
