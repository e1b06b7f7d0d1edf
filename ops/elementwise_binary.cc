#include "ops/elementwise_binary.h"

#include <utility>

namespace gguflow::ops {

BoundOp bind_elementwise_binary(Binder& b, BinaryFn fn) {
  const Shape& shape = *b.input_shape(0);
  const int64_t row = row_length(shape);
  const bool per_token = has_token_dim(shape);
  return {{}, [fn = std::move(fn), row, per_token](const StepView& s, const NodeIo& io) {
            fn(at<const float>(s, io.inputs[0]), at<const float>(s, io.inputs[1]),
               at<float>(s, io.outputs[0]), row * (per_token ? s.n_tokens : 1));
          }};
}

BoundOp bind_elementwise_binary(Binder& b, ElementwiseFn fn) {
  const GguflowKernels& k = b.kernels();
  return bind_elementwise_binary(
      b, BinaryFn([&k, fn](const float* x, const float* y, float* out, int64_t n) {
        fn(k, x, y, out, n);
      }));
}

}  // namespace gguflow::ops
