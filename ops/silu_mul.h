// silu_mul: the SwiGLU gate of the FFN, y = silu(gate) * up with silu(g) = g / (1 + exp(-g)).
// The full FFN is down(silu_mul(gate(x), up(x))): two matmuls that may run concurrently, this
// op, then the down matmul.
#pragma once

#include <cstdint>

#include "plugins/abi/kernel_abi.h"

namespace gguflow::ops {

// gate, up, y: [n] f32 (n = n_tokens * n_ff for a batch).
void silu_mul(const GguflowKernels& k, const float* gate, const float* up, float* y, int64_t n);

}  // namespace gguflow::ops
