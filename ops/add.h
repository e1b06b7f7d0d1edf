// add: element-wise sum of equal-shaped f32 tensors (the residual stream).
#pragma once

#include <cstdint>

#include "plugins/abi/kernel_abi.h"

namespace gguflow::ops {

// a, b, y: [n] f32; y may be a or b.
void add(const GguflowKernels& k, const float* a, const float* b, float* y, int64_t n);

}  // namespace gguflow::ops
