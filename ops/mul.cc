#include "ops/mul.h"

namespace gguflow::ops {

void mul(const GguflowKernels& k, const float* a, const float* b, float* y, int64_t n) {
  k.mul_f32(a, b, y, n);
}

}  // namespace gguflow::ops
