#include "ops/add_row.h"

namespace gguflow::ops {

void add_row(const float* x, const float* row, float* y, int64_t n_rows, int64_t n) {
  for (int64_t r = 0; r < n_rows; ++r)
    for (int64_t i = 0; i < n; ++i) y[r * n + i] = x[r * n + i] + row[i];
}

}  // namespace gguflow::ops
