// add_row: one row of a table added to every row of x (BERT's token-type embedding for
// single-segment input: row 0 of token_types.weight added to every token).
#pragma once

#include <cstdint>

namespace gguflow::ops {

// x, y: [n_rows][n] f32 (y may be x); row: [n] f32. y[r][i] = x[r][i] + row[i].
void add_row(const float* x, const float* row, float* y, int64_t n_rows, int64_t n);

}  // namespace gguflow::ops
