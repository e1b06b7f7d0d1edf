// gelu_mul: the GeGLU gate of the FFN, y = gelu(gate) * up (gemma: down(gelu_tanh(gate x) * up x)).
#pragma once

#include <cstdint>

#include "ops/gelu.h"

namespace gguflow::ops {

// gate, up, y: [n] f32; y may be gate or up. gelu as ops/gelu.h, then one float multiply.
void gelu_mul(const GguflowKernels& k, const float* gate, const float* up, float* y, int64_t n,
              GeluApprox approx);

}  // namespace gguflow::ops
