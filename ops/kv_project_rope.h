// kv_project_rope: grouped-query causal attention over a low-rank cache of keys taken BEFORE
// rotary position embedding (values as kv_project).
//
// Keys before RoPE are far more low-rank than after it (the rotation spreads each direction
// over position-dependent pairs), but RoPE does not commute with a projection: the cache can
// only hold the coordinates c_t = Pᵀ(k_t − μ) of the un-rotated key k_t at position t. The
// score of a query q_h (already rotated at its own position) with key t is, exactly,
//   score(q_h, t) = q_h · R(t) k̂_t,   k̂_t = P_g c_t + μ_g          (R(t): RoPE at position t)
// so each step rebuilds every cached key of every KV head from its coordinates, rotates it at
// its own position (the cache row is the position: no window) and scores it like attention.
// The rebuilt keys are scratch of one step, shared by all query heads and tokens of the step
// ([rows][kv_row] f32: one layer's full key cache, transient, reused by the next layer), not
// cache: the cache keeps r_K + r_V floats per token. Cost per step: rows x kv_row x r_K
// multiply-adds to rebuild, then plain attention. With P of full rank both sides are equal up
// to float rounding.
#pragma once

#include <cstdint>

#include "ops/kv_project.h"
#include "ops/rope.h"

namespace gguflow::ops {

// RoPE of the cached keys: the rotation of cache row j (= position j).
struct KeyRotation {
  int64_t n_rot = 0;          // rotated values per head (even, <= head_dim)
  RopePairing pairing = RopePairing::kNormal;
  const float* cos_sin = nullptr;  // [rows][n_rot]: rope_cos_sin of positions 0..rows-1
};

// keys [row_end - row_begin][kv_row]: rows [row_begin, row_end) of the cache rebuilt
// (k̂ = P c + μ for every KV head) and rotated at their positions.
void kv_project_rope_keys(const GguflowKernels& k, const AttentionShape& s, const LowRankBasis& kb,
                          const KeyRotation& rot, const KvCacheView& cache, int64_t row_begin,
                          int64_t row_end, float* keys);

// Floats of per-thread scratch kv_project_rope_heads needs.
int64_t kv_project_rope_scratch_floats(const LowRankBasis& vb, int64_t n_ctx);

// Heads [task_begin, task_end) of task = t * n_head + h, as attention_heads, scoring against
// `keys` (kv_project_rope_keys of rows 0..max position of the step) and reading values out of
// the low-rank V cache. q, out: [n_tokens][q_row]; scratch: kv_project_rope_scratch_floats().
void kv_project_rope_heads(const GguflowKernels& k, const AttentionShape& s, const LowRankBasis& vb,
                           const float* keys, const float* q, const int32_t* positions,
                           const KvCacheView& cache, int64_t task_begin, int64_t task_end,
                           float* scratch, float* out);

}  // namespace gguflow::ops
