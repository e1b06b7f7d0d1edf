#include "ops/kv_project_rope.h"

#include <cmath>
#include <cstring>

#include "ops/error.h"

namespace gguflow::ops {

void kv_project_rope_keys(const GguflowKernels& k, const AttentionShape& s, const LowRankBasis& kb,
                          const KeyRotation& rot, const KvCacheView& cache, int64_t row_begin,
                          int64_t row_end, float* keys) {
  GGUFLOW_CHECK(0 <= row_begin && row_begin <= row_end && row_end <= cache.rows);
  const int64_t hd = s.head_dim, row = s.kv_row();
  const float* coords = cache.k_f32();  // [rows][kb.rank]
  for (int64_t j = row_begin; j < row_end; ++j) {
    float* key = keys + (j - row_begin) * row;  // [n_kv_head][head_dim]
    std::memcpy(key, kb.mean, sizeof(float) * row);
    const float* c = coords + j * kb.rank;
    for (int64_t g = 0; g < s.n_kv_head; ++g)
      for (int64_t i = kb.first[g]; i < kb.last[g]; ++i)  // only the basis rows touching head g
        k.axpy_f32(c[i], kb.basis + i * row + g * hd, key + g * hd, hd);
  }
  // Row j is position j: rotate the rebuilt keys exactly as the rope op rotates fresh ones.
  rope(k, keys, row_end - row_begin, s.n_kv_head, hd, rot.n_rot, rot.cos_sin + row_begin * rot.n_rot,
       rot.pairing);
}

int64_t kv_project_rope_scratch_floats(const LowRankBasis& vb, int64_t n_ctx) {
  return n_ctx + vb.rank;
}

void kv_project_rope_heads(const GguflowKernels& k, const AttentionShape& s, const LowRankBasis& vb,
                           const float* keys, const float* q, const int32_t* positions,
                           const KvCacheView& cache, int64_t task_begin, int64_t task_end,
                           float* scratch, float* out) {
  const int64_t hd = s.head_dim, row = s.kv_row();
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  float* scores = scratch;               // [rows]
  float* mixed = scratch + cache.rows;   // [vb.rank]: Σ_t a_t c_t
  for (int64_t task = task_begin; task < task_end; ++task) {
    const auto [t, h, g, n_keys, qh] = head_task(s, task, positions, q, cache);
    for (int64_t j = 0; j < n_keys; ++j) scores[j] = k.dot_f32(qh, keys + j * row + g * hd, hd);
    k.scale_f32(scale, scores, n_keys);
    k.softmax_f32(scores, n_keys);
    low_rank_read_out(k, s, vb, g, scores, n_keys, cache.v_f32(), mixed, out + t * s.q_row() + h * hd);
  }
}

}  // namespace gguflow::ops
