#include "ops/pool.h"

#include <cstring>

#include "ops/error.h"

namespace gguflow::ops {

int64_t pool_output_rows(PoolMode mode, int64_t n_tokens) {
  return mode == PoolMode::kNone ? n_tokens : 1;
}

void pool(const GguflowKernels& k, PoolMode mode, const float* x, int64_t n_tokens, int64_t n,
          float* y) {
  GGUFLOW_CHECK(n_tokens >= 1);
  switch (mode) {
    case PoolMode::kNone:
      std::memcpy(y, x, sizeof(float) * n_tokens * n);
      return;
    case PoolMode::kFirst:
      std::memcpy(y, x, sizeof(float) * n);
      return;
    case PoolMode::kLast:
      std::memcpy(y, x + (n_tokens - 1) * n, sizeof(float) * n);
      return;
    case PoolMode::kSum:
    case PoolMode::kMean:
      std::memcpy(y, x, sizeof(float) * n);
      for (int64_t t = 1; t < n_tokens; ++t) k.add_f32(y, x + t * n, y, n);
      if (mode == PoolMode::kMean) k.scale_f32(1.0f / static_cast<float>(n_tokens), y, n);
      return;
  }
}

}  // namespace gguflow::ops
