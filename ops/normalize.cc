#include "ops/normalize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ops/error.h"

namespace gguflow::ops {

void normalize(const GguflowKernels& k, NormalizeMode mode, const float* x, float* y,
               int64_t n_rows, int64_t n) {
  if (x != y) std::memmove(y, x, sizeof(float) * n_rows * n);
  if (mode == NormalizeMode::kNone) return;
  for (int64_t r = 0; r < n_rows; ++r) {
    float* row = y + r * n;
    const float norm = std::sqrt(k.dot_f32(row, row, n));
    k.scale_f32(1.0f / std::max(norm, 1e-12f), row, n);
  }
}

}  // namespace gguflow::ops
