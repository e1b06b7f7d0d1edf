#include "ops/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ops/error.h"
#include "ops/op_binder.h"

namespace gguflow::ops {

void kv_cache_store(const AttentionShape& s, const float* k_new, const float* v_new,
                    const int32_t* positions, int64_t n_tokens, const KvCacheView& cache) {
  const int64_t row = s.kv_row();
  for (int64_t t = 0; t < n_tokens; ++t) {
    const int64_t p = positions[t];
    GGUFLOW_CHECK(0 <= p);
    const int64_t r = p % cache.rows;
    std::memcpy(cache.k + r * row, k_new + t * row, sizeof(float) * row);
    std::memcpy(cache.v + r * row, v_new + t * row, sizeof(float) * row);
  }
}

void attention_heads(const GguflowKernels& k, const AttentionShape& s,
                     const AttentionScoring& scoring, const float* q, const int32_t* positions,
                     int64_t seq_len, const KvCacheView& cache, int64_t task_begin,
                     int64_t task_end, float* scores, float* out) {
  GGUFLOW_CHECK(s.n_kv_head > 0 && s.n_head % s.n_kv_head == 0);
  GGUFLOW_CHECK(scoring.window >= 0 && scoring.softcap >= 0);
  GGUFLOW_CHECK(scoring.causal || scoring.window == 0);
  const int64_t group = s.n_head / s.n_kv_head;
  const int64_t hd = s.head_dim;
  const float scale =
      scoring.scale != 0 ? scoring.scale : 1.0f / std::sqrt(static_cast<float>(hd));
  const float cap = scoring.softcap;
  for (int64_t task = task_begin; task < task_end; ++task) {
    const int64_t t = task / s.n_head;
    const int64_t h = task % s.n_head;
    const int64_t kvh = h / group;
    const int64_t p = positions[t];
    GGUFLOW_CHECK(0 <= p && p < seq_len);
    // Causal: positions 0..p; a sliding window keeps the last `window` of them. Non-causal:
    // the whole sequence 0..seq_len-1.
    const int64_t last = scoring.causal ? p : seq_len - 1;
    const int64_t first = scoring.window > 0 ? std::max<int64_t>(0, p - scoring.window + 1) : 0;
    const int64_t n_keys = last + 1 - first;
    GGUFLOW_CHECK(n_keys <= cache.rows);
    // Visible keys are rows first % rows, ... in order, wrapping once at the end of the ring:
    // `split` keys before the wrap, the rest from row 0.
    const int64_t start = first % cache.rows;
    const int64_t split = std::min(n_keys, cache.rows - start);
    const float* kh = cache.k + start * s.kv_row() + kvh * hd;
    const float* vh = cache.v + start * s.kv_row() + kvh * hd;
    const float* kh_wrap = cache.k + kvh * hd - split * s.kv_row();  // key j >= split
    const float* vh_wrap = cache.v + kvh * hd - split * s.kv_row();
    const float* qh = q + t * s.q_row() + h * hd;
    for (int64_t j = 0; j < split; ++j) scores[j] = k.dot_f32(qh, kh + j * s.kv_row(), hd);
    for (int64_t j = split; j < n_keys; ++j) scores[j] = k.dot_f32(qh, kh_wrap + j * s.kv_row(), hd);
    k.scale_f32(scale, scores, n_keys);
    if (cap > 0)
      for (int64_t j = 0; j < n_keys; ++j) scores[j] = cap * std::tanh(scores[j] / cap);
    k.softmax_f32(scores, n_keys);
    float* oh = out + t * s.q_row() + h * hd;
    std::memset(oh, 0, sizeof(float) * hd);
    for (int64_t j = 0; j < split; ++j) k.axpy_f32(scores[j], vh + j * s.kv_row(), oh, hd);
    for (int64_t j = split; j < n_keys; ++j) k.axpy_f32(scores[j], vh_wrap + j * s.kv_row(), oh, hd);
  }
}

KvCacheView sequence_cache(const KvCacheView& cache, const StepSequence& seq, int64_t k_row,
                           int64_t v_row) {
  if (seq.cache_rows == 0) {
    GGUFLOW_CHECK(0 <= seq.slot && seq.slot < cache.slots);
    return {cache.k + seq.slot * cache.rows * k_row, cache.v + seq.slot * cache.rows * v_row,
            cache.rows, 1};
  }
  GGUFLOW_CHECK(seq.cache_row >= 0 && seq.cache_row + seq.cache_rows <= cache.rows * cache.slots);
  return {cache.k + seq.cache_row * k_row, cache.v + seq.cache_row * v_row, seq.cache_rows, 1};
}

int64_t sequence_length(const int32_t* positions, int64_t n_tokens) {
  int64_t last = -1;
  for (int64_t t = 0; t < n_tokens; ++t) last = std::max<int64_t>(last, positions[t]);
  return last + 1;
}

}  // namespace gguflow::ops
