// rmsnorm: y = x / sqrt(mean(x^2) + eps) * w, row by row, or group by group within each row
// (qwen3 and gemma 3 normalise each head of q and k on its own).
#pragma once

#include <cstdint>

#include "plugins/abi/kernel_abi.h"

namespace gguflow::ops {

// x, y: [n_rows][n] f32 (distinct buffers). Each run of `group` consecutive values of a row
// (group divides n; 0 means n, the whole row) is normalised on its own with the same gain
// w: [group] f32, or null for none. One kernel rmsnorm_f32 call per group.
void rmsnorm(const GguflowKernels& k, const float* x, const float* w, float* y, int64_t n_rows,
             int64_t n, float eps, int64_t group = 0);

}  // namespace gguflow::ops
