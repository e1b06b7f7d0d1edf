#include "ops/elementwise_binary.h"

namespace gguflow::ops {

BoundOp bind_elementwise_binary(Binder& b, ElementwiseFn fn) {
  const Shape& shape = *b.input_shape(0);
  const int64_t row = row_length(shape);
  const bool per_token = has_token_dim(shape);
  const GguflowKernels& k = b.kernels();
  return {{}, [&k, fn, row, per_token](const StepView& s, const NodeIo& io) {
            fn(k, at<const float>(s, io.inputs[0]), at<const float>(s, io.inputs[1]),
               at<float>(s, io.outputs[0]), row * (per_token ? s.n_tokens : 1));
          }};
}

}  // namespace gguflow::ops
