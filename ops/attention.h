// attention: causal (or, for encoders, bidirectional) grouped-query self-attention over a
// per-layer KV cache whose rows are f32, or f16 / q8_0 / q4_0 read in place by the kernel table
// (kv_dot for q . k, kv_axpy for the weighted sum of values, in blocks of queries:
// kv_dot_rows, kv_axpy_rows; one block decoded at a time).
//
// Query head h reads KV head h / (n_head / n_kv_head). A token at position p attends to the
// keys of positions 0..p, or with a sliding window W to positions max(0, p - W + 1)..p (key j is
// masked iff p - j >= W). Non-causal, every query sees keys 0..n-1 of the n positions stored so
// far, its own step's later tokens included. The cache holds one sequence; position p lives in row p % rows, so a
// windowed layer's cache needs only W + (tokens of a step) - 1 rows (a ring), a full one n_ctx. Each score is s = scale * (q . k) (scale 1/sqrt(head_dim) unless given), then
// soft-capped s = c * tanh(s / c) when a cap c is given (gemma2), then normalised with the kernel
// table's softmax over the visible keys; the output of a head is sum_j a_j V[j], accumulated in
// order of j, so results do not depend on the thread split.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ops/kv_cache_type.h"
#include "plugins/abi/kernel_abi.h"

namespace gguflow::ops {

struct AttentionShape {
  int64_t n_head = 0;     // query heads
  int64_t n_kv_head = 0;  // key/value heads (divides n_head)
  int64_t head_dim = 0;
  int64_t q_row() const { return n_head * head_dim; }
  int64_t kv_row() const { return n_kv_head * head_dim; }
};

// How one query's scores are formed; the defaults are plain causal attention.
struct AttentionScoring {
  float scale = 0;     // factor of q . k; 0: 1.0f / sqrt(float(head_dim))
  float softcap = 0;   // c > 0: s -> c * tanh(s / c) after the scale, before the softmax
  int64_t window = 0;  // W > 0: keys max(0, p - W + 1)..p only; 0: keys 0..p
  // false (encoders such as BERT): every query sees every key of the sequence so far, later
  // positions of its own step included; no window.
  bool causal = true;
};

// One layer's cache: k, v: [slots][rows] rows of k_row_bytes / v_row_bytes bytes in k_type /
// v_type (kv_cache_type.h: f32 by default; f16, q8_0, q4_0 blocks); position p of the sequence
// in slot s in row s * rows + p % rows. A cache without a window has one row per context
// position (rows = n_ctx, row = position). A session holds one slot per sequence it keeps (a
// server's concurrent requests); an op sees the slot's own view (sequence_cache).
//
// heads = 1: a row is one cached token's n_kv_head * head_dim elements. heads > 1 (head-major,
// what a session allocates for attention where the types allow a head's width): every KV head
// keeps its own [slots][rows] block of rows of head_dim elements, head g's k_head_stride bytes
// after head g - 1's (v alike), so that one head's keys at consecutive positions are next to
// each other. Attention reads a KV head's rows position after position; with every head in one
// row, that walk strides by the whole row and the hardware prefetchers follow it badly: decode
// attention of one Qwen2.5-0.5B sequence from DRAM (2 heads x 64 floats, f32) took 19.8 us at
// 128 keys and 74.1 at 512 in whole rows, 15.8 and 50.9 head-major (bench/attention_bench.cc).
struct KvCacheView {
  std::byte* k = nullptr;
  std::byte* v = nullptr;
  int64_t rows = 0;   // per slot
  int64_t slots = 1;
  KvCacheType k_type = KvCacheType::kF32;
  KvCacheType v_type = KvCacheType::kF32;
  size_t k_row_bytes = 0;  // one row of one head's block (heads > 1) or of the whole cache
  size_t v_row_bytes = 0;
  int64_t heads = 1;
  size_t k_head_stride = 0;  // heads > 1: bytes from one head's block to the next
  size_t v_head_stride = 0;

  // An f32 cache of rows of k_width / v_width floats over caller-owned memory (tests, studies).
  static KvCacheView f32(float* k, float* v, int64_t rows, int64_t k_width, int64_t v_width,
                         int64_t slots = 1);
  // The blocks as floats, for the ops and studies that handle only f32 (kv_project, kv study);
  // aborts on another type (their binders refuse it first with a clear error).
  float* k_f32() const;
  float* v_f32() const;
  std::byte* k_row(int64_t r) const { return k + static_cast<size_t>(r) * k_row_bytes; }
  std::byte* v_row(int64_t r) const { return v + static_cast<size_t>(r) * v_row_bytes; }
  // Block g of the cache's `heads` as a cache of its own (heads = 1): a head-major cache's head
  // g, or the whole cache when heads = 1.
  KvCacheView head(int64_t g) const;
  // Bytes of the K and of the V blocks of a whole cache (all slots and heads).
  size_t k_bytes() const { return static_cast<size_t>(heads * rows * slots) * k_row_bytes; }
  size_t v_bytes() const { return static_cast<size_t>(heads * rows * slots) * v_row_bytes; }
};

// Rows [0, n_rows) of an f32 cache (either layout) as [n_rows][heads * width] floats, keys or
// values: the one-row-per-token form the studies read (runtime/lowrank).
void kv_rows_f32(const KvCacheView& cache, bool values, int64_t n_rows, float* out);

// Writes the new keys/values at their positions (row p % rows), encoded in the cache's types
// by the kernel table (kv_store_row; f32 rows are copied). k_new, v_new: [n_tokens][kv_row]
// f32. Positions are >= 0; the caller checks the context length.
void kv_cache_store(const GguflowKernels& k, const AttentionShape& s, const float* k_new, const float* v_new,
                    const int32_t* positions, int64_t n_tokens, const KvCacheView& cache);

// Computes heads [task_begin, task_end) of the flattened (token, head) index
// task = t * n_head + h, in blocks of queries (a few whole tokens x one KV head's group, see
// attention.cc) that read each cache row once per block; every row's result has the bits of
// the row computed alone. q: [n_tokens][q_row]; out: [n_tokens][q_row]; scratch:
// attention_scratch_floats(s, max_keys) floats private to the calling thread, where max_keys
// >= min(cache.rows, seq_len) bounds the keys a query sees. seq_len is the sequence's length
// once this step is stored (its last position + 1): the keys a non-causal query sees; every
// position is below it. A query's visible keys must all still be in the ring:
// p - first < cache.rows.
void attention_heads(const GguflowKernels& k, const AttentionShape& s,
                     const AttentionScoring& scoring, const float* q, const int32_t* positions,
                     int64_t seq_len, const KvCacheView& cache, int64_t task_begin,
                     int64_t task_end, int64_t max_keys, float* scratch, float* out);

// Scratch floats of one attention_heads call over `cache` (its element types and layout): a
// block's scores over up to max_keys keys, its queries and outputs, and for an f16 cache or an
// f32 cache of whole rows a copy of one KV head's keys and values over up to min(max_keys, 4096)
// positions (an f32 head-major block is read in place).
int64_t attention_scratch_floats(const AttentionShape& s, int64_t max_keys, const KvCacheView& cache);

// Tasks of one block of whole tokens: the least a thread's share of a prompt should hold.
int64_t attention_tile_tasks(const AttentionShape& s);

// The sequence's length once a step at `positions` is stored: the largest position + 1.
int64_t sequence_length(const int32_t* positions, int64_t n_tokens);

struct StepSequence;
// The region of `cache` one sequence of a step owns (op_binder.h StepSequence): rows
// [cache_row, cache_row + cache_rows) of the whole allocation, or its slot's rows when
// cache_rows is 0.
KvCacheView sequence_cache(const KvCacheView& cache, const StepSequence& seq);

}  // namespace gguflow::ops
