#include "ops/rmsnorm.h"

namespace gguflow::ops {

void rmsnorm(const GguflowKernels& k, const float* x, const float* w, float* y, int64_t n_rows,
             int64_t n, float eps, int64_t group) {
  if (group == 0) group = n;
  const int64_t n_groups = n_rows * (n / group);
  for (int64_t g = 0; g < n_groups; ++g) k.rmsnorm_f32(x + g * group, w, y + g * group, group, eps);
}

}  // namespace gguflow::ops
