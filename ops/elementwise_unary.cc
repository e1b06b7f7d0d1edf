#include "ops/elementwise_unary.h"

#include <utility>

namespace gguflow::ops {

BoundOp bind_elementwise_unary(Binder& b, UnaryFn fn) {
  return {{}, [fn = std::move(fn), shape = *b.input_shape(0)](const StepView& s, const NodeIo& io) {
            fn(at<const float>(s, io.inputs[0]), at<float>(s, io.outputs[0]),
               shape.elements(s.n_tokens));
          }};
}

}  // namespace gguflow::ops
