#include "ops/elementwise_binary.h"

#include <utility>

namespace gguflow::ops {

BoundOp bind_elementwise_binary(Binder& b, BinaryFn fn) {
  return {{}, [fn = std::move(fn), shape = *b.input_shape(0)](const StepView& s, const NodeIo& io) {
            fn(at<const float>(s, io.inputs[0]), at<const float>(s, io.inputs[1]),
               at<float>(s, io.outputs[0]), shape.elements(s.n_tokens));
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
