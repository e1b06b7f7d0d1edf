#include "ops/rope.h"

#include <cmath>

#include "ops/error.h"

namespace gguflow::ops {

void rope_cos_sin(const int32_t* positions, int64_t n_tokens, int64_t n_rot, float base,
                  float* cos_sin, const float* freq_factors) {
  GGUFLOW_CHECK(n_rot > 0 && n_rot % 2 == 0);
  const float theta_scale = std::pow(base, -2.0f / static_cast<float>(n_rot));
  for (int64_t t = 0; t < n_tokens; ++t) {
    float theta = static_cast<float>(positions[t]);
    float* row = cos_sin + t * n_rot;
    for (int64_t i = 0; i < n_rot / 2; ++i) {
      const float th = freq_factors ? theta / freq_factors[i] : theta;
      row[2 * i] = std::cos(th);
      row[2 * i + 1] = std::sin(th);
      theta *= theta_scale;
    }
  }
}

void rope(const GguflowKernels& k, float* x, int64_t n_tokens, int64_t n_heads,
          int64_t head_dim, int64_t n_rot, const float* cos_sin, RopePairing pairing) {
  GGUFLOW_CHECK(n_rot <= head_dim);
  const int neox = pairing == RopePairing::kNeox ? 1 : 0;
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t h = 0; h < n_heads; ++h)
      k.rope_f32(x + (t * n_heads + h) * head_dim, n_rot, cos_sin + t * n_rot, neox);
}

}  // namespace gguflow::ops
