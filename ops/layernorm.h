// layernorm: y = (x - mean) / sqrt(var + eps) * w + b over each row (BERT-family encoders).
#pragma once

#include <cstdint>

namespace gguflow::ops {

// x, y: [n_rows][n] f32 (y may be x); w, b: [n] f32, each may be null (gain 1, bias 0).
// The variance is the biased one (divided by n). As ggml_norm computes it: the mean and the
// sum of squared deviations accumulate in double (in four interleaved partial sums), the rest
// is float, so results do not depend on the kernel plugin.
void layernorm(const float* x, const float* w, const float* b, float* y, int64_t n_rows, int64_t n,
               float eps);

}  // namespace gguflow::ops
