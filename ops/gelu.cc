#include "ops/gelu.h"

namespace gguflow::ops {

void gelu(const float* x, float* y, int64_t n, GeluApprox approx) {
  if (approx == GeluApprox::kTanh) {
    for (int64_t i = 0; i < n; ++i) y[i] = gelu_tanh(x[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = gelu_erf(x[i]);
  }
}

}  // namespace gguflow::ops
