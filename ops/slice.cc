#include "ops/slice.h"

#include <cstring>

namespace gguflow::ops {

void slice(const float* x, float* y, int64_t n_rows, int64_t n, int64_t offset, int64_t length) {
  for (int64_t r = 0; r < n_rows; ++r)
    std::memcpy(y + r * length, x + r * n + offset, sizeof(float) * static_cast<size_t>(length));
}

}  // namespace gguflow::ops
