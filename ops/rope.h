// rope: rotary position embedding of query/key heads.
//
// Pair i (0 <= i < n_rot/2) of a head is rotated by theta_i = pos * base^(-2i/n_rot), divided by
// freq_factors[i] when the model has frequency factors (Llama 3.x rope_freqs.weight, as ggml).
// Pairing: "normal" (llama, ggml ROPE_TYPE_NORM) rotates (2i, 2i+1); "neox" (qwen2,
// ROPE_TYPE_NEOX) rotates (i, i + n_rot/2). Elements n_rot..head_dim stay as they are.
#pragma once

#include <cstdint>

#include "plugins/abi/kernel_abi.h"

namespace gguflow::ops {

enum class RopePairing { kNormal, kNeox };

// cos_sin[t][2i], cos_sin[t][2i+1] = cos, sin of theta_i at positions[t].
// cos_sin: [n_tokens][n_rot] f32. Computed in float exactly as ggml's rope cache does:
// theta starts at (float)pos and is multiplied by theta_scale = powf(base, -2/n_rot) per pair;
// pair i uses theta / freq_factors[i] when freq_factors ([n_rot/2]) is given.
void rope_cos_sin(const int32_t* positions, int64_t n_tokens, int64_t n_rot, float base,
                  float* cos_sin, const float* freq_factors = nullptr);

// Rotates every head of every token in place. x: [n_tokens][n_heads][head_dim] f32;
// cos_sin as made by rope_cos_sin for the same tokens.
void rope(const GguflowKernels& k, float* x, int64_t n_tokens, int64_t n_heads,
          int64_t head_dim, int64_t n_rot, const float* cos_sin, RopePairing pairing);

}  // namespace gguflow::ops
