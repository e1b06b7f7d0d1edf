// scale: y = x * factor, elementwise (gemma multiplies its token embeddings by sqrt(n_embd)).
#pragma once

#include <cstdint>

#include "plugins/abi/kernel_abi.h"

namespace gguflow::ops {

// x, y: [n] f32; y may be x. One float multiply per element (the kernel table's scale_f32).
void scale(const GguflowKernels& k, const float* x, float* y, int64_t n, float factor);

}  // namespace gguflow::ops
