#include "ops/scale.h"

#include <cstring>

namespace gguflow::ops {

void scale(const GguflowKernels& k, const float* x, float* y, int64_t n, float factor) {
  if (y != x) std::memcpy(y, x, sizeof(float) * static_cast<size_t>(n));
  k.scale_f32(factor, y, n);
}

}  // namespace gguflow::ops
