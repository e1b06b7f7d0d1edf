#include "ops/gelu_mul.h"

#include <algorithm>

namespace gguflow::ops {

void gelu_mul(const GguflowKernels& k, const float* gate, const float* up, float* y, int64_t n,
              GeluApprox approx) {
  if (approx == GeluApprox::kTanh) {
    // Through a small buffer: y may alias up, which the multiply still reads.
    float g[256];
    for (int64_t i = 0; i < n; i += 256) {
      const int64_t m = std::min<int64_t>(256, n - i);
      k.gelu_tanh_f32(gate + i, g, m);
      for (int64_t j = 0; j < m; ++j) y[i + j] = g[j] * up[i + j];
    }
    return;
  }
  if (approx == GeluApprox::kTanh) {
    for (int64_t i = 0; i < n; ++i) y[i] = gelu_tanh(gate[i]) * up[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = gelu_erf(gate[i]) * up[i];
  }
}

}  // namespace gguflow::ops
