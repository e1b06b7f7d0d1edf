#include "ops/elementwise_binary.h"

#include <utility>

namespace gguflow::ops {

// Row by row, not over the flat buffer: a vector kernel's scalar tail then covers the same
// elements of a row whatever the step holds, so a row's result never depends on its neighbours
// (texts embedded together, requests decoded together: Session::evaluate_sequences).
BoundOp bind_elementwise_binary(Binder& b, BinaryFn fn) {
  const Shape shape = *b.input_shape(0);
  const int64_t row = row_length(shape);
  const Parallel& par = b.parallel();
  return {{}, [&par, fn = std::move(fn), shape, row](const StepView& s, const NodeIo& io) {
            const float* x = at<const float>(s, io.inputs[0]);
            const float* y = at<const float>(s, io.inputs[1]);
            float* out = at<float>(s, io.outputs[0]);
            parallel_elementwise_rows(par, s.elements(shape) / row, row, [&](int64_t r0, int64_t r1) {
              for (int64_t i = r0 * row; i < r1 * row; i += row) fn(x + i, y + i, out + i, row);
            });
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
