// rmsnorm: y = x / sqrt(mean(x^2) + eps) * w, row by row.
#pragma once

#include <cstdint>

#include "plugins/abi/kernel_abi.h"

namespace gguflow::ops {

// x, y: [n_rows][n] f32 (distinct buffers); w: [n] f32 gain, or null for none.
void rmsnorm(const GguflowKernels& k, const float* x, const float* w, float* y, int64_t n_rows,
             int64_t n, float eps);

}  // namespace gguflow::ops
