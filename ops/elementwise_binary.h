// Binding shared by the ops that combine two equal-shaped f32 tensors element by element
// (add, mul, silu_mul, gelu_mul): y[i] = f(a[i], b[i]) over every element of the step, one row
// at a time (a row's result never depends on the other rows of the step).
#pragma once

#include <cstdint>
#include <functional>

#include "ops/op_binder.h"

namespace gguflow::ops {

// a, b, y: [n] f32; y may be a or b.
using ElementwiseFn = void (*)(const GguflowKernels& k, const float* a, const float* b, float* y,
                               int64_t n);
// The same closed over the node's typed attributes (gelu_mul's approximation).
using BinaryFn = std::function<void(const float* a, const float* b, float* y, int64_t n)>;

// Inputs 0 and 1 as a and b, output 0 as y; T rows per step when the shape has the token dim.
BoundOp bind_elementwise_binary(Binder& b, ElementwiseFn fn);
BoundOp bind_elementwise_binary(Binder& b, BinaryFn fn);

}  // namespace gguflow::ops
