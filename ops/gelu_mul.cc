#include "ops/gelu_mul.h"

namespace gguflow::ops {

void gelu_mul(const float* gate, const float* up, float* y, int64_t n, GeluApprox approx) {
  if (approx == GeluApprox::kTanh) {
    for (int64_t i = 0; i < n; ++i) y[i] = gelu_tanh(gate[i]) * up[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = gelu_erf(gate[i]) * up[i];
  }
}

}  // namespace gguflow::ops
