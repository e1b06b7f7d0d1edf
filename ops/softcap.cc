#include "ops/softcap.h"

#include <cmath>

namespace gguflow::ops {

void softcap(const float* x, float* y, int64_t n, float cap) {
  const float inv = 1.0f / cap;
  for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(x[i] * inv) * cap;
}

}  // namespace gguflow::ops
