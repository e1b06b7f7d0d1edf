#include "ops/attention.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <utility>

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
  GGUFLOW_CHECK(k_type == KvCacheType::kF32 && heads == 1);
  return reinterpret_cast<float*>(k);
}

float* KvCacheView::v_f32() const {
  GGUFLOW_CHECK(v_type == KvCacheType::kF32 && heads == 1);
  return reinterpret_cast<float*>(v);
}

KvCacheView KvCacheView::head(int64_t g) const {
  GGUFLOW_CHECK(0 <= g && g < heads);
  if (heads == 1) return *this;
  KvCacheView h = *this;
  h.k = k + static_cast<size_t>(g) * k_head_stride;
  h.v = v + static_cast<size_t>(g) * v_head_stride;
  h.heads = 1;
  h.k_head_stride = h.v_head_stride = 0;
  return h;
}

void kv_rows_f32(const KvCacheView& cache, bool values, int64_t n_rows, float* out) {
  GGUFLOW_CHECK((values ? cache.v_type : cache.k_type) == KvCacheType::kF32 && 0 <= n_rows && n_rows <= cache.rows * cache.slots);
  const size_t row_bytes = values ? cache.v_row_bytes : cache.k_row_bytes;
  const int64_t width = static_cast<int64_t>(row_bytes / sizeof(float));  // of one head's block, or the row
  for (int64_t g = 0; g < cache.heads; ++g) {
    const KvCacheView block = cache.head(g);
    for (int64_t r = 0; r < n_rows; ++r)
      std::memcpy(out + (r * cache.heads + g) * width, values ? block.v_row(r) : block.k_row(r), row_bytes);
  }
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
  GGUFLOW_CHECK(cache.heads == 1 || cache.heads == s.n_kv_head);
  const int64_t width = row / cache.heads;  // elements of a stored row: the whole row or one head's
  GGUFLOW_CHECK(cache.k_row_bytes == kv_cache_row_bytes(cache.k_type, width) &&
                cache.v_row_bytes == kv_cache_row_bytes(cache.v_type, width));
  for (int64_t g = 0; g < cache.heads; ++g) {
    const KvCacheView block = cache.head(g);
    for (int64_t t = 0; t < n_tokens; ++t) {
      const int64_t p = positions[t];
      GGUFLOW_CHECK(0 <= p);
      const int64_t r = p % cache.rows;
      store_row(k, cache.k_type, k_new + t * row + g * width, block.k_row(r), width);
      store_row(k, cache.v_type, v_new + t * row + g * width, block.v_row(r), width);
    }
  }
}

namespace {

// Query rows of a tile, at most (or one GQA group when the group is larger): each key and
// value row of the cache is read once per tile instead of once per query. 32 rows of scores
// over 2,048 keys are 256 KiB, about one core's L2.
constexpr int64_t kTileQueries = 32;

int64_t tile_tokens(const AttentionShape& s) {
  return std::max<int64_t>(1, kTileQueries / (s.n_head / s.n_kv_head));
}

int64_t tile_rows(const AttentionShape& s) { return tile_tokens(s) * (s.n_head / s.n_kv_head); }

// The scoring of attention_heads with its defaults resolved, and the keys a token sees.
struct Keys {
  const AttentionScoring& scoring;
  int64_t seq_len;
  const int32_t* positions;
  // Causal: positions first..p, a sliding window keeping the last `window` of them.
  // Non-causal: the whole sequence 0..seq_len-1.
  std::pair<int64_t, int64_t> of(int64_t t) const {
    const int64_t p = positions[t];
    GGUFLOW_CHECK(0 <= p && p < seq_len);
    const int64_t last = scoring.causal ? p : seq_len - 1;
    const int64_t first = scoring.window > 0 ? std::max<int64_t>(0, p - scoring.window + 1) : 0;
    return {first, last};
  }
};

// Calls fn(position, row, count) for the runs of consecutive cache rows that hold positions
// a..b in order: one run, or two where the ring wraps. Nothing for b < a.
template <class Fn>
void for_each_run(const KvCacheView& cache, int64_t a, int64_t b, const Fn& fn) {
  while (a <= b) {
    const int64_t row = a % cache.rows;
    const int64_t count = std::min(b - a + 1, cache.rows - row);
    fn(a, row, count);
    a += count;
  }
}

// Tokens [t0, t1) x query heads [h0, h1) of one KV head's group, as one block of queries.
//
// Every query row gets the bits of attention one query at a time: its scores are the same
// kv_dot results (kv_dot_rows is bit-identical to them), scaled, capped and normalised by the
// same calls over the same n_keys floats, and its output is the same kv_axpy sequence in order
// of the key (kv_axpy_rows, bit-identical; the tile's own keys first, then the keys common to
// the tile, then its own later keys, so still in order of the key). So the result of a row does
// not depend on the tile it is in: not on the thread split, nor on how a prompt is cut into
// steps, nor on decoding (a tile of one query); batch invariance and the reference logits are
// those of the row-at-a-time code. (An online softmax over key blocks would read the scores
// once fewer but would change every row's float order.)
//
// scratch: scores [tile_rows][max_keys], row r's key at position j at column j - lo (lo the
// tile's first key), then the queries and outputs of the tile, [tile_rows][head_dim] each.
//
// offset: the KV head's first element in a row of `cache` (the whole cache of whole rows; 0 in
// a head-major cache's block of the head, kv_head, or in a copy of the head's rows, head_rows).
void attend_tile(const GguflowKernels& k, const AttentionShape& s, const Keys& keys, float scale,
                 const float* q, const KvCacheView& cache, int64_t offset, int64_t t0, int64_t t1,
                 int64_t h0, int64_t h1, int64_t max_keys, float* scratch, float* out) {
  const int64_t hd = s.head_dim, n_h = h1 - h0, n_rows = (t1 - t0) * n_h;
  int64_t lo = INT64_MAX, hi = -1, common_lo = 0, common_hi = INT64_MAX;
  for (int64_t t = t0; t < t1; ++t) {
    const auto [first, last] = keys.of(t);
    GGUFLOW_CHECK(last + 1 - first <= cache.rows);  // every visible key still in the ring
    lo = std::min(lo, first);
    hi = std::max(hi, last);
    common_lo = std::max(common_lo, first);
    common_hi = std::min(common_hi, last);
  }
  GGUFLOW_CHECK(hi + 1 - lo <= max_keys);
  float* scores = scratch;
  float* qt = scratch + tile_rows(s) * max_keys;  // [n_rows][hd]
  float* yt = qt + tile_rows(s) * hd;             // [n_rows][hd]
  for (int64_t r = 0; r < n_rows; ++r) {
    const int64_t t = t0 + r / n_h, h = h0 + r % n_h;
    std::memcpy(qt + r * hd, q + t * s.q_row() + h * hd, sizeof(float) * hd);
  }
  std::memset(yt, 0, sizeof(float) * n_rows * hd);
  const uint32_t k_type = kv_cache_ggml_type(cache.k_type), v_type = kv_cache_ggml_type(cache.v_type);
  // Rows [r, r + n) of the tile against the keys at positions a..b.
  const auto dots = [&](int64_t r, int64_t n, int64_t a, int64_t b) {
    for_each_run(cache, a, b, [&](int64_t p, int64_t row, int64_t count) {
      k.kv_dot_rows(k_type, qt + r * hd, hd, n, cache.k_row(row), cache.k_row_bytes, count, offset, hd,
                    scores + r * max_keys + (p - lo), max_keys);
    });
  };
  const auto axpys = [&](int64_t r, int64_t n, int64_t a, int64_t b) {
    for_each_run(cache, a, b, [&](int64_t p, int64_t row, int64_t count) {
      k.kv_axpy_rows(v_type, scores + r * max_keys + (p - lo), max_keys, n, cache.v_row(row), cache.v_row_bytes,
                     count, offset, yt + r * hd, hd, hd);
    });
  };
  // Keys common to every row of the tile (none when windows do not overlap) in one pass; each
  // row's others on their own.
  const bool common = common_lo <= common_hi;
  const auto own_before = [&](int64_t r) {
    const auto [first, last] = keys.of(t0 + r / n_h);
    return std::pair{first, common ? common_lo - 1 : last};
  };
  const auto own_after = [&](int64_t r) {
    const auto [first, last] = keys.of(t0 + r / n_h);
    return std::pair{common ? common_hi + 1 : last + 1, last};
  };
  for (int64_t r = 0; r < n_rows; ++r) {
    const auto [a, b] = own_before(r);
    const auto [c, d] = own_after(r);
    dots(r, 1, a, b);
    dots(r, 1, c, d);
  }
  if (common) dots(0, n_rows, common_lo, common_hi);
  const float cap = keys.scoring.softcap;
  for (int64_t r = 0; r < n_rows; ++r) {
    const auto [first, last] = keys.of(t0 + r / n_h);
    float* row = scores + r * max_keys + (first - lo);
    const int64_t n_keys = last + 1 - first;
    k.scale_f32(scale, row, n_keys);
    if (cap > 0)
      for (int64_t j = 0; j < n_keys; ++j) row[j] = cap * std::tanh(row[j] / cap);
    k.softmax_f32(row, n_keys);
  }
  for (int64_t r = 0; r < n_rows; ++r) {
    const auto [a, b] = own_before(r);
    axpys(r, 1, a, b);
  }
  if (common) axpys(0, n_rows, common_lo, common_hi);
  for (int64_t r = 0; r < n_rows; ++r) {
    const auto [c, d] = own_after(r);
    axpys(r, 1, c, d);
  }
  for (int64_t r = 0; r < n_rows; ++r) {
    const int64_t t = t0 + r / n_h, h = h0 + r % n_h;
    std::memcpy(out + t * s.q_row() + h * hd, yt + r * hd, sizeof(float) * hd);
  }
}

// The most positions head_rows copies: 4,096 positions of a 128-wide head are 4 MiB of keys
// and values, several times L2 already; longer spans read the cache in place (the kernels then
// copy a 16 KiB chunk at a time). Bounds the scratch at long contexts.
constexpr int64_t kHeadCopyMaxPositions = 4096;

int64_t head_copy_positions(int64_t max_keys) { return std::min(max_keys, kHeadCopyMaxPositions); }

// Whether head_rows may copy a head of `cache` (the whole cache or one head's block): f32 or f16
// rows, except f32 rows that hold one head each (a head-major block, or a one-KV-head cache),
// which are what a copy would make already.
bool copies_heads(const KvCacheView& cache, const AttentionShape& s) {
  const auto widens = [](KvCacheType t) { return t == KvCacheType::kF32 || t == KvCacheType::kF16; };
  const size_t f32_head = sizeof(float) * static_cast<size_t>(s.head_dim);
  const bool f32_heads = cache.k_type == KvCacheType::kF32 && cache.v_type == KvCacheType::kF32 &&
                         cache.k_row_bytes == f32_head && cache.v_row_bytes == f32_head;
  return widens(cache.k_type) && widens(cache.v_type) && !f32_heads;
}

// Whether the kernel table widens f16 (dequantize_row is promised for the act_type entries).
bool widens_f16(const GguflowKernels& k, const KvCacheView& cache) {
  const bool f16 = cache.k_type == KvCacheType::kF16 || cache.v_type == KvCacheType::kF16;
  return !f16 || k.act_type[GGML_TYPE_F16] == GGML_TYPE_F16;
}

// One KV head's rows: the head's own block of a head-major cache (offset 0), or the whole
// cache with the head's first element at `offset` in every row.
struct KvHead {
  KvCacheView rows;
  int64_t offset;
};

KvHead kv_head(const KvCacheView& cache, const AttentionShape& s, int64_t g) {
  GGUFLOW_CHECK(cache.heads == 1 || cache.heads == s.n_kv_head);
  if (cache.heads > 1) return {cache.head(g), 0};
  return {cache, g * s.head_dim};
}

// A KV head's keys and values at positions lo..hi of an f32 or f16 cache, copied next to each
// other as f32 into the scratch after a tile's (attention_scratch_floats): position p in row
// p % (hi - lo + 1) of `out.rows`, head_dim floats a row, so that for_each_run finds it as in
// the cache. Returns that copy, or `head` itself where nothing is copied.
//
// f16 rows are widened once for every tile of the range instead of once per tile. And where a
// row holds every KV head (heads = 1; qwen3: 8 x 128 floats, 4 KiB), one head's slices of
// consecutive rows lie 4 KiB apart: they map to a few L1 and L2 sets, and every tile of a prompt
// read them again from L3; copied once per range, the head's rows (512 positions: 256 KiB of
// keys, as much of values) stay in L2 while every tile reads them. An f32 head-major block is
// that already and is read in place. The values are the same floats (f16 widens exactly), and
// the kernels' f16 dot and axpy are their f32 operations on the widened values, so every score
// and output keeps its bits (decode, one query, reads the cache in place). Nothing is copied
// for a block type (q8_0, q4_0), an f32 head-major cache or more positions than
// head_copy_positions(max_keys).
KvHead head_rows(const GguflowKernels& k, const KvHead& head, const AttentionShape& s, int64_t lo, int64_t hi,
                 int64_t max_keys, float* scratch) {
  const KvCacheView& cache = head.rows;
  const int64_t capacity = head_copy_positions(max_keys);
  // More positions than the ring's rows: some were overwritten (no single token sees them all).
  if (!copies_heads(cache, s) || !widens_f16(k, cache) || hi < lo || hi + 1 - lo > capacity || hi + 1 - lo > cache.rows)
    return head;
  const int64_t hd = s.head_dim, span = hi + 1 - lo;
  float* k_rows = scratch + tile_rows(s) * (max_keys + 2 * hd);
  float* v_rows = k_rows + capacity * hd;
  // The head's elements of a stored row as f32 into dst.
  const auto widen = [&](KvCacheType type, const std::byte* row, float* dst) {
    if (type == KvCacheType::kF32)
      std::memcpy(dst, reinterpret_cast<const float*>(row) + head.offset, sizeof(float) * hd);
    else  // f16: 2 bytes an element
      k.dequantize_row(kv_cache_ggml_type(type), reinterpret_cast<const uint16_t*>(row) + head.offset, dst, hd);
  };
  for_each_run(cache, lo, hi, [&](int64_t p, int64_t row, int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
      const int64_t dst = (p + i) % span * hd;
      widen(cache.k_type, cache.k_row(row + i), k_rows + dst);
      widen(cache.v_type, cache.v_row(row + i), v_rows + dst);
    }
  });
  return {KvCacheView::f32(k_rows, v_rows, span, hd, hd), 0};
}

}  // namespace

int64_t attention_scratch_floats(const AttentionShape& s, int64_t max_keys, const KvCacheView& cache) {
  // A tile's scores, queries and outputs; then one KV head's keys and values (head_rows).
  const int64_t copy = copies_heads(cache, s) ? 2 * head_copy_positions(max_keys) * s.head_dim : 0;
  return tile_rows(s) * (max_keys + 2 * s.head_dim) + copy;
}

int64_t attention_tile_tasks(const AttentionShape& s) { return tile_tokens(s) * s.n_head; }

void attention_heads(const GguflowKernels& k, const AttentionShape& s,
                     const AttentionScoring& scoring, const float* q, const int32_t* positions,
                     int64_t seq_len, const KvCacheView& cache, int64_t task_begin,
                     int64_t task_end, int64_t max_keys, float* scratch, float* out) {
  GGUFLOW_CHECK(s.n_kv_head > 0 && s.n_head % s.n_kv_head == 0);
  GGUFLOW_CHECK(scoring.window >= 0 && scoring.softcap >= 0);
  GGUFLOW_CHECK(scoring.causal || scoring.window == 0);
  const int64_t group = s.n_head / s.n_kv_head;
  const float scale =
      scoring.scale != 0 ? scoring.scale : 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  const Keys keys{scoring, seq_len, positions};
  // Heads [h0, h1) of token t, one tile per KV head they touch.
  const auto token_heads = [&](int64_t t, int64_t h0, int64_t h1) {
    for (int64_t h = h0; h < h1;) {
      const int64_t end = std::min(h1, (h / group + 1) * group);
      const KvHead head = kv_head(cache, s, h / group);
      attend_tile(k, s, keys, scale, q, head.rows, head.offset, t, t + 1, h, end, max_keys, scratch, out);
      h = end;
    }
  };
  for (int64_t task = task_begin; task < task_end;) {
    const int64_t t = task / s.n_head, h = task % s.n_head;
    if (h != 0 || task_end - task < s.n_head) {  // a token the range holds only some heads of
      const int64_t end = std::min(task_end, (t + 1) * s.n_head);
      token_heads(t, h, end - t * s.n_head);
      task = end;
      continue;
    }
    // Whole tokens t..t_end-1, one KV head after the other: a head's keys and values (512
    // positions of a 128-wide f32 head: 512 KiB) stay in L2 while every tile of the range
    // reads them, where taking the heads in turn per tile cycled all of a layer's through it.
    const int64_t t_end = task_end / s.n_head;
    // The end of the tile starting at token b: as many tokens as a tile holds whose keys fit
    // the scratch row.
    const auto tile_end = [&](int64_t b) {
      int64_t e = b + 1, lo = keys.of(b).first, hi = keys.of(b).second;
      while (e < t_end && e - b < tile_tokens(s)) {
        const auto [first, last] = keys.of(e);
        if (std::max(hi, last) + 1 - std::min(lo, first) > max_keys) break;
        lo = std::min(lo, first);
        hi = std::max(hi, last);
        ++e;
      }
      return e;
    };
    // The positions the range's tokens see, all of them.
    int64_t lo = INT64_MAX, hi = -1;
    for (int64_t b = t; b < t_end; ++b) lo = std::min(lo, keys.of(b).first), hi = std::max(hi, keys.of(b).second);
    for (int64_t h0 = 0; h0 < s.n_head; h0 += group) {
      const int64_t g = h0 / group;
      KvHead head = kv_head(cache, s, g);
      // Copied only when more than one tile will read it: one tile (a decode step's token, a
      // thread's small share of a prompt) reads each row once anyway.
      if (t_end - t > tile_tokens(s)) head = head_rows(k, head, s, lo, hi, max_keys, scratch);
      for (int64_t b = t; b < t_end;) {
        const int64_t e = tile_end(b);
        attend_tile(k, s, keys, scale, q, head.rows, head.offset, b, e, h0, h0 + group, max_keys, scratch, out);
        b = e;
      }
    }
    task = t_end * s.n_head;
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
