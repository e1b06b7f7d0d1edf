// kv_project: grouped-query causal attention over a low-rank KV cache.
//
// Instead of a key/value row x (the layer's n_kv_head * head_dim values) the cache stores its
// coordinates c = Pᵀ(x − μ) in a calibrated basis P ([d, r]: r basis vectors of d = kv_row
// values, stored as r rows) with mean μ [d]. With P_g every basis vector restricted to KV head
// g's values (head_dim each) and μ_g the mean's slice:
//   score(q_h, token t) = q_h · k_g,t ≈ (P_gᵀ q_h) · c_t + q_h · μ_g
//   out_h = Σ_t a_t v_g,t          ≈ P_g (Σ_t a_t c_t) + μ_g        (Σ_t a_t = 1)
// so attention never rebuilds a key or a value. Memory per token is r_K + r_V floats instead of
// 2 * kv_row. With P of full rank (orthonormal, r = d) both lines are exact.
//
// Per-head bases (granularity head) are one block-diagonal basis: head g's vectors are zero
// outside its slice. `first`/`last` record, per KV head, the basis vectors that touch it,
// so a head's work is its own rank, not the layer's.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/attention.h"
#include "plugins/abi/kernel_abi.h"

namespace gguflow::ops {

// One basis (for K or for V) of a layer.
struct LowRankBasis {
  const float* basis = nullptr;  // [rank][kv_row]: row j = basis vector j
  const float* mean = nullptr;   // [kv_row]
  int64_t rank = 0;
  // Per KV head g: basis rows [first[g], last[g]) are the only ones nonzero on g's values.
  std::vector<int64_t> first, last;  // [n_kv_head]
};

// Scans the basis for the rows that touch each head (call once, at bind time).
LowRankBasis make_low_rank_basis(const float* basis, const float* mean, int64_t rank,
                                 const AttentionShape& s);

// The reduced cache of one layer: k: [n_ctx][k.rank], v: [n_ctx][v.rank] f32.
// Stores c = Pᵀ(x − μ) of the new rows at their positions. k_new, v_new: [n_tokens][kv_row].
// `centred`: scratch of kv_row floats.
void kv_project_store(const AttentionShape& s, const LowRankBasis& kb, const LowRankBasis& vb,
                      const float* k_new, const float* v_new, const int32_t* positions,
                      int64_t n_tokens, const KvCacheView& cache, float* centred);

// Floats of per-thread scratch kv_project_heads needs.
int64_t kv_project_scratch_floats(const LowRankBasis& kb, const LowRankBasis& vb, int64_t n_ctx);

// The value read-out of one query head over KV head g: oh = P_g (Σ_j a_j c_j) + μ_g, with a
// [n_keys] the head's softmax weights (they sum to 1) and c_j the V cache's coordinates
// (v_cache: [rows][vb.rank]). mixed: scratch of vb.rank floats; oh: [head_dim].
void low_rank_read_out(const GguflowKernels& k, const AttentionShape& s, const LowRankBasis& vb,
                       int64_t g, const float* a, int64_t n_keys, const float* v_cache, float* mixed,
                       float* oh);

// One task of the low-rank ops' head loops, task = t * n_head + h: token t, query head h, its
// KV head g, the keys it sees (causal: cache rows 0..positions[t]), its query qh [head_dim].
struct HeadTask {
  int64_t t, h, g, n_keys;
  const float* qh;
};
HeadTask head_task(const AttentionShape& s, int64_t task, const int32_t* positions, const float* q,
                   const KvCacheView& cache);

// Heads [task_begin, task_end) of task = t * n_head + h, as attention_heads. q, out:
// [n_tokens][q_row]; scratch: kv_project_scratch_floats() floats private to the calling thread.
void kv_project_heads(const GguflowKernels& k, const AttentionShape& s, const LowRankBasis& kb,
                      const LowRankBasis& vb, const float* q, const int32_t* positions,
                      const KvCacheView& cache, int64_t task_begin, int64_t task_end,
                      float* scratch, float* out);

}  // namespace gguflow::ops
