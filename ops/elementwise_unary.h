// Binding shared by the ops that map one f32 tensor to one of the same shape element by element
// (scale, softcap, gelu): y[i] = f(x[i]) over every element of the step, f closed over the
// node's typed attributes.
#pragma once

#include <cstdint>
#include <functional>

#include "ops/op_binder.h"

namespace gguflow::ops {

// x, y: [n] f32 (distinct arena buffers).
using UnaryFn = std::function<void(const float* x, float* y, int64_t n)>;

// Input 0 as x, output 0 as y; T rows per step when the shape has the token dim, or only the
// last one (as row 0) when the node produces the graph output and the step asks for the last
// row only. Single-threaded.
BoundOp bind_elementwise_unary(Binder& b, UnaryFn fn);

}  // namespace gguflow::ops
