#include "ops/layernorm.h"

#include <cmath>

namespace gguflow::ops {

void layernorm(const float* x, const float* w, const float* b, float* y, int64_t n_rows, int64_t n,
               float eps) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += xr[i];
    const float mean = static_cast<float>(sum / static_cast<double>(n));
    double sum_sq = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float d = xr[i] - mean;
      yr[i] = d;
      sum_sq += static_cast<double>(d) * d;
    }
    const float variance = static_cast<float>(sum_sq / static_cast<double>(n));
    const float scale = 1.0f / std::sqrt(variance + eps);
    for (int64_t i = 0; i < n; ++i) {
      float v = yr[i] * scale;
      if (w) v *= w[i];
      if (b) v += b[i];
      yr[i] = v;
    }
  }
}

}  // namespace gguflow::ops
