#include "ops/kv_project.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ops/error.h"

namespace gguflow::ops {

LowRankBasis make_low_rank_basis(const float* basis, const float* mean, int64_t rank,
                                 const AttentionShape& s) {
  GGUFLOW_CHECK(basis && mean && rank >= 1);
  const int64_t hd = s.head_dim, row = s.kv_row();
  LowRankBasis b{basis, mean, rank, std::vector<int64_t>(s.n_kv_head, rank),
                 std::vector<int64_t>(s.n_kv_head, 0)};
  for (int64_t j = 0; j < rank; ++j)
    for (int64_t g = 0; g < s.n_kv_head; ++g) {
      const float* slice = basis + j * row + g * hd;
      if (std::any_of(slice, slice + hd, [](float x) { return x != 0.0f; })) {
        b.first[g] = std::min(b.first[g], j);
        b.last[g] = std::max(b.last[g], j + 1);
      }
    }
  for (int64_t g = 0; g < s.n_kv_head; ++g)
    if (b.first[g] >= b.last[g]) b.first[g] = b.last[g] = 0;  // the basis ignores head g
  return b;
}

namespace {

// c[j] = dot(basis row j, x - mean) for j < rank; `centred` is scratch [kv_row].
void project(const LowRankBasis& b, int64_t row, const float* x, float* centred, float* c) {
  for (int64_t i = 0; i < row; ++i) centred[i] = x[i] - b.mean[i];
  for (int64_t j = 0; j < b.rank; ++j) {
    const float* p = b.basis + j * row;
    float acc = 0.0f;
    for (int64_t i = 0; i < row; ++i) acc += p[i] * centred[i];
    c[j] = acc;
  }
}

}  // namespace

void kv_project_store(const AttentionShape& s, const LowRankBasis& kb, const LowRankBasis& vb,
                      const float* k_new, const float* v_new, const int32_t* positions,
                      int64_t n_tokens, const KvCacheView& cache, float* centred) {
  const int64_t row = s.kv_row();
  for (int64_t t = 0; t < n_tokens; ++t) {
    const int64_t p = positions[t];
    GGUFLOW_CHECK(0 <= p && p < cache.rows);  // no window: row = position
    project(kb, row, k_new + t * row, centred, cache.k_f32() + p * kb.rank);
    project(vb, row, v_new + t * row, centred, cache.v_f32() + p * vb.rank);
  }
}

int64_t kv_project_scratch_floats(const LowRankBasis& kb, const LowRankBasis& vb, int64_t n_ctx) {
  return n_ctx + kb.rank + vb.rank;
}

HeadTask head_task(const AttentionShape& s, int64_t task, const int32_t* positions, const float* q,
                   const KvCacheView& cache) {
  GGUFLOW_CHECK(s.n_kv_head > 0 && s.n_head % s.n_kv_head == 0);
  HeadTask x;
  x.t = task / s.n_head;
  x.h = task % s.n_head;
  x.g = x.h / (s.n_head / s.n_kv_head);
  x.n_keys = positions[x.t] + 1;
  GGUFLOW_CHECK(x.n_keys <= cache.rows);  // no window: row = position
  x.qh = q + x.t * s.q_row() + x.h * s.head_dim;
  return x;
}

void kv_project_heads(const GguflowKernels& k, const AttentionShape& s, const LowRankBasis& kb,
                      const LowRankBasis& vb, const float* q, const int32_t* positions,
                      const KvCacheView& cache, int64_t task_begin, int64_t task_end,
                      float* scratch, float* out) {
  const int64_t hd = s.head_dim, row = s.kv_row();
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  float* scores = scratch;                  // [rows]
  float* q_reduced = scratch + cache.rows;  // [kb.rank]: P_gᵀ q_h
  float* mixed = q_reduced + kb.rank;        // [vb.rank]: Σ_t a_t c_t
  const float* k_cache = cache.k_f32();      // [rows][kb.rank] coordinates
  for (int64_t task = task_begin; task < task_end; ++task) {
    const auto [t, h, g, n_keys, qh] = head_task(s, task, positions, q, cache);

    // Keys: reduced query over the basis vectors touching head g, plus the mean's share.
    const int64_t k0 = kb.first[g], k1 = kb.last[g];
    for (int64_t j = k0; j < k1; ++j) q_reduced[j] = k.dot_f32(kb.basis + j * row + g * hd, qh, hd);
    const float q_mean = k.dot_f32(kb.mean + g * hd, qh, hd);
    for (int64_t j = 0; j < n_keys; ++j)
      scores[j] = (k1 > k0 ? k.dot_f32(q_reduced + k0, k_cache + j * kb.rank + k0, k1 - k0) : 0.0f) + q_mean;
    k.scale_f32(scale, scores, n_keys);
    k.softmax_f32(scores, n_keys);

    low_rank_read_out(k, s, vb, g, scores, n_keys, cache.v_f32(), mixed, out + t * s.q_row() + h * hd);
  }
}

void low_rank_read_out(const GguflowKernels& k, const AttentionShape& s, const LowRankBasis& vb,
                       int64_t g, const float* a, int64_t n_keys, const float* v_cache, float* mixed,
                       float* oh) {
  // Mix the coordinates, then map back with P_g and add μ_g.
  const int64_t hd = s.head_dim, row = s.kv_row();
  const int64_t v0 = vb.first[g], v1 = vb.last[g];
  std::memcpy(oh, vb.mean + g * hd, sizeof(float) * hd);
  if (v1 > v0) {
    std::memset(mixed + v0, 0, sizeof(float) * (v1 - v0));
    for (int64_t j = 0; j < n_keys; ++j) k.axpy_f32(a[j], v_cache + j * vb.rank + v0, mixed + v0, v1 - v0);
    for (int64_t j = v0; j < v1; ++j) k.axpy_f32(mixed[j], vb.basis + j * row + g * hd, oh, hd);
  }
}

}  // namespace gguflow::ops
