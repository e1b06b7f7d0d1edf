#include "ops/rmsnorm.h"

namespace gguflow::ops {

void rmsnorm(const GguflowKernels& k, const float* x, const float* w, float* y, int64_t n_rows,
             int64_t n, float eps) {
  for (int64_t r = 0; r < n_rows; ++r) k.rmsnorm_f32(x + r * n, w, y + r * n, n, eps);
}

}  // namespace gguflow::ops
