#include "ops/add.h"

namespace gguflow::ops {

void add(const GguflowKernels& k, const float* a, const float* b, float* y, int64_t n) {
  k.add_f32(a, b, y, n);
}

}  // namespace gguflow::ops
