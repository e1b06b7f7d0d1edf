// layernorm: y = (x - mean) / sqrt(var + eps) * w + b over each row (BERT-family encoders).
#pragma once

#include <cstdint>

namespace gguflow::ops {

// x, y: [n_rows][n] f32 (y may be x); w, b: [n] f32, each may be null (gain 1, bias 0).
// The variance is the biased one (divided by n). As in ggml_norm, the mean and the sum of
// squared deviations accumulate in double and the rest is float, but the double sums are four
// interleaved partial sums (element i into i % 4), not ggml's one sequential sum, so a mean or
// variance can differ from ggml's in its last bit. Results do not depend on the kernel plugin.
void layernorm(const float* x, const float* w, const float* b, float* y, int64_t n_rows, int64_t n,
               float eps);

}  // namespace gguflow::ops
