#include "ops/gelu.h"

namespace gguflow::ops {

void gelu(const GguflowKernels& k, const float* x, float* y, int64_t n, GeluApprox approx) {
  if (approx == GeluApprox::kTanh) {
    k.gelu_tanh_f32(x, y, n);
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = gelu_erf(x[i]);
  }
}

}  // namespace gguflow::ops
