#include "ops/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ops/error.h"
#include "ops/op_binder.h"

namespace gguflow::ops {

KvCacheView KvCacheView::f32(float* k, float* v, int64_t rows, int64_t k_width, int64_t v_width,
                             int64_t slots) {
  KvCacheView c;
  c.k = reinterpret_cast<std::byte*>(k);
  c.v = reinterpret_cast<std::byte*>(v);
  c.rows = rows;
  c.slots = slots;
  c.k_row_bytes = sizeof(float) * static_cast<size_t>(k_width);
  c.v_row_bytes = sizeof(float) * static_cast<size_t>(v_width);
  return c;
}

float* KvCacheView::k_f32() const {
  GGUFLOW_CHECK(k_type == KvCacheType::kF32);
  return reinterpret_cast<float*>(k);
}

float* KvCacheView::v_f32() const {
  GGUFLOW_CHECK(v_type == KvCacheType::kF32);
  return reinterpret_cast<float*>(v);
}

namespace {

void store_row(const GguflowKernels& k, KvCacheType type, const float* x, std::byte* dst, int64_t width) {
  if (type == KvCacheType::kF32) std::memcpy(dst, x, sizeof(float) * static_cast<size_t>(width));
  else k.kv_store_row(kv_cache_ggml_type(type), x, dst, width);
}

}  // namespace

void kv_cache_store(const GguflowKernels& k, const AttentionShape& s, const float* k_new, const float* v_new,
                    const int32_t* positions, int64_t n_tokens, const KvCacheView& cache) {
  const int64_t row = s.kv_row();
  GGUFLOW_CHECK(cache.k_row_bytes == kv_cache_row_bytes(cache.k_type, row) &&
                cache.v_row_bytes == kv_cache_row_bytes(cache.v_type, row));
  for (int64_t t = 0; t < n_tokens; ++t) {
    const int64_t p = positions[t];
    GGUFLOW_CHECK(0 <= p);
    const int64_t r = p % cache.rows;
    store_row(k, cache.k_type, k_new + t * row, cache.k_row(r), row);
    store_row(k, cache.v_type, v_new + t * row, cache.v_row(r), row);
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
    // key j is row (start + j) % rows.
    const int64_t start = first % cache.rows;
    const auto row_of = [&](int64_t j) {
      const int64_t r = start + j;
      return r < cache.rows ? r : r - cache.rows;
    };
    const int64_t offset = kvh * hd;  // the head's first element in a row
    const float* qh = q + t * s.q_row() + h * hd;
    if (cache.k_type == KvCacheType::kF32) {
      const float* kf = cache.k_f32();
      for (int64_t j = 0; j < n_keys; ++j) scores[j] = k.dot_f32(qh, kf + row_of(j) * s.kv_row() + offset, hd);
    } else {
      const uint32_t type = kv_cache_ggml_type(cache.k_type);
      for (int64_t j = 0; j < n_keys; ++j) scores[j] = k.kv_dot(type, qh, cache.k_row(row_of(j)), offset, hd);
    }
    k.scale_f32(scale, scores, n_keys);
    if (cap > 0)
      for (int64_t j = 0; j < n_keys; ++j) scores[j] = cap * std::tanh(scores[j] / cap);
    k.softmax_f32(scores, n_keys);
    float* oh = out + t * s.q_row() + h * hd;
    std::memset(oh, 0, sizeof(float) * hd);
    if (cache.v_type == KvCacheType::kF32) {
      const float* vf = cache.v_f32();
      for (int64_t j = 0; j < n_keys; ++j) k.axpy_f32(scores[j], vf + row_of(j) * s.kv_row() + offset, oh, hd);
    } else {
      const uint32_t type = kv_cache_ggml_type(cache.v_type);
      for (int64_t j = 0; j < n_keys; ++j) k.kv_axpy(type, scores[j], cache.v_row(row_of(j)), offset, oh, hd);
    }
  }
}

KvCacheView sequence_cache(const KvCacheView& cache, const StepSequence& seq) {
  KvCacheView view = cache;
  view.slots = 1;
  if (seq.cache_rows == 0) {
    GGUFLOW_CHECK(0 <= seq.slot && seq.slot < cache.slots);
    view.k = cache.k_row(seq.slot * cache.rows);
    view.v = cache.v_row(seq.slot * cache.rows);
    return view;
  }
  GGUFLOW_CHECK(seq.cache_row >= 0 && seq.cache_row + seq.cache_rows <= cache.rows * cache.slots);
  view.k = cache.k_row(seq.cache_row);
  view.v = cache.v_row(seq.cache_row);
  view.rows = seq.cache_rows;
  return view;
}

int64_t sequence_length(const int32_t* positions, int64_t n_tokens) {
  int64_t last = -1;
  for (int64_t t = 0; t < n_tokens; ++t) last = std::max<int64_t>(last, positions[t]);
  return last + 1;
}

}  // namespace gguflow::ops
