#include "ops/silu_mul.h"

namespace gguflow::ops {

void silu_mul(const GguflowKernels& k, const float* gate, const float* up, float* y, int64_t n) {
  k.silu_mul_f32(gate, up, y, n);
}

}  // namespace gguflow::ops
