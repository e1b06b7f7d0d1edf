// KV cache rows in a compact element type (ABI 4): storing a row as F16 / Q8_0 / Q4_0, and the
// two reads attention makes of a stored row without decoding the cache: q . k over one head's
// elements, and y += a * v.
//
// A head's elements [offset, offset + n) of a row are read block by block. The fast path (the
// head starts on a block boundary and covers whole blocks: head_dim 64 or 128) multiplies each
// 32-element block in vectors: q8_0 and q4_0 integers are widened to f32 lanes, multiplied
// with q (or scaled by a * d and added to y), and the block's sum is scaled by its d. A head
// narrower than a block, or one that starts inside a block (stories260K: head_dim 8), decodes
// one block at a time into 32 floats and uses the overlap. Nothing is allocated.
//
// The `_rows` entries (ABI 5) do the same per (query, row) pair for a block of queries over a
// run of rows: rows are taken kRowChunk at a time so that every query of the block passes over
// them while they are in L1, and kv_axpy_rows keeps a query's output in registers across the
// rows instead of loading and storing it once per row (the store-to-load chain that made
// axpy a sixth of a long prompt's time). For eight or more queries an f32 chunk of rows that
// hold every KV head is first copied into 16 KiB of one head's elements next to each other
// (PackRows: 4 KiB-apart slices alias in L1). A session's f32 caches are head-major (one head a
// row: nothing to copy); whole rows come from views built by hand (tests, benchmarks).
#include <cmath>
#include <cstring>

#include "plugins/kernels/kernels_internal.h"
#include "plugins/kernels/dot_f32-inl.h"

namespace gguflow::kernels {
namespace {

namespace hn = hwy::HWY_NAMESPACE;
using DF = hn::ScalableTag<float>;
constexpr int64_t kBlock = 32;

// GGML's quantize_row_q4_0_ref: the element of largest magnitude (sign included) maps to -8,
// d = max / -8, q = min(15, (int8)(x / d + 8.5)) (truncation toward zero, as GGML).
void QuantizeQ4_0(const float* x, block_q4_0* y, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b, x += kBlock) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < kBlock; ++j) {
      if (std::fabs(x[j]) > amax) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    const float d = max / -8;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = gguflow_f32_to_fp16(d);
    for (int j = 0; j < kBlock / 2; ++j) {
      const uint8_t lo = static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>(x[j] * id + 8.5f))));
      const uint8_t hi = static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>(x[j + 16] * id + 8.5f))));
      y[b].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

// The 32 decoded values of block `b` of a quantized row.
void DecodeBlock(uint32_t type, const void* row, int64_t b, float out[kBlock]) {
  if (type == GGML_TYPE_Q8_0) {
    const block_q8_0& blk = static_cast<const block_q8_0*>(row)[b];
    const float d = HalfToFloat(blk.d);
    for (int j = 0; j < kBlock; ++j) out[j] = d * static_cast<float>(blk.qs[j]);
  } else {
    const block_q4_0& blk = static_cast<const block_q4_0*>(row)[b];
    const float d = HalfToFloat(blk.d);
    for (int j = 0; j < kBlock / 2; ++j) {
      out[j] = d * static_cast<float>((blk.qs[j] & 0x0F) - 8);
      out[j + 16] = d * static_cast<float>((blk.qs[j] >> 4) - 8);
    }
  }
}

// The block's 32 values as f32 vectors, lanes at a time: calls f(j, values of j..j+lanes) with
// the block's integers (q8_0: q; q4_0: q - 8) widened to f32, not yet scaled by d.
template <class F>
inline void ForEachBlockVector(uint32_t type, const void* row, int64_t b, F&& f) {
  const DF df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  if (type == GGML_TYPE_Q8_0) {
    const hn::Rebind<int32_t, DF> di;
    const hn::Rebind<int8_t, DF> d8;
    const int8_t* qs = static_cast<const block_q8_0*>(row)[b].qs;
    for (int64_t j = 0; j < kBlock; j += lanes) f(j, hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(d8, qs + j))));
  } else {
    const hn::Rebind<int32_t, DF> di;
    const hn::Rebind<uint8_t, DF> du8;
    const uint8_t* qs = static_cast<const block_q4_0*>(row)[b].qs;
    const auto low_mask = hn::Set(di, 0x0F), eight = hn::Set(di, 8);
    // lanes <= 16 on every target, so the 16 bytes are whole vectors of lanes.
    for (int64_t j = 0; j < kBlock / 2; j += lanes) {
      const auto bytes = hn::BitCast(di, hn::PromoteTo(hn::Rebind<uint32_t, DF>(), hn::LoadU(du8, qs + j)));
      f(j, hn::ConvertTo(df, hn::Sub(hn::And(bytes, low_mask), eight)));
      f(j + 16, hn::ConvertTo(df, hn::Sub(hn::ShiftRight<4>(bytes), eight)));
    }
  }
}

float BlockScale(uint32_t type, const void* row, int64_t b) {
  return type == GGML_TYPE_Q8_0 ? HalfToFloat(static_cast<const block_q8_0*>(row)[b].d)
                                : HalfToFloat(static_cast<const block_q4_0*>(row)[b].d);
}

float DotF16(const float* q, const gguflow_fp16_t* k, int64_t n) {
  const DF df;
  const hn::Rebind<hwy::float16_t, DF> dh;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  auto acc = hn::Zero(df);
  int64_t i = 0;
  const auto* kh = reinterpret_cast<const hwy::float16_t*>(k);
  for (; i + lanes <= n; i += lanes) acc = hn::MulAdd(hn::LoadU(df, q + i), hn::PromoteTo(df, hn::LoadU(dh, kh + i)), acc);
  float sum = hn::GetLane(hn::SumOfLanes(df, acc));
  for (; i < n; ++i) sum += q[i] * HalfToFloat(k[i]);
  return sum;
}

void AxpyF16(float a, const gguflow_fp16_t* v, float* y, int64_t n) {
  const DF df;
  const hn::Rebind<hwy::float16_t, DF> dh;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const auto va = hn::Set(df, a);
  const auto* vh = reinterpret_cast<const hwy::float16_t*>(v);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes)
    hn::StoreU(hn::MulAdd(va, hn::PromoteTo(df, hn::LoadU(dh, vh + i)), hn::LoadU(df, y + i)), df, y + i);
  for (; i < n; ++i) y[i] += a * HalfToFloat(v[i]);
}

// Quantized q . row[offset, offset + n).
float DotBlocks(uint32_t type, const float* q, const void* row, int64_t offset, int64_t n) {
  if (offset % kBlock == 0 && n % kBlock == 0) {
    const DF df;
    auto total = hn::Zero(df);
    for (int64_t b = offset / kBlock; b < (offset + n) / kBlock; ++b) {
      const float* qb = q + b * kBlock - offset;
      auto acc = hn::Zero(df);
      ForEachBlockVector(type, row, b, [&](int64_t j, auto v) { acc = hn::MulAdd(hn::LoadU(df, qb + j), v, acc); });
      total = hn::MulAdd(hn::Set(df, BlockScale(type, row, b)), acc, total);
    }
    return hn::GetLane(hn::SumOfLanes(df, total));
  }
  float sum = 0.0f, values[kBlock];
  for (int64_t e = offset; e < offset + n;) {
    const int64_t b = e / kBlock, end = std::min(offset + n, (b + 1) * kBlock);
    DecodeBlock(type, row, b, values);
    for (int64_t i = e; i < end; ++i) sum += q[i - offset] * values[i - b * kBlock];
    e = end;
  }
  return sum;
}

// Quantized y += a * row[offset, offset + n).
void AxpyBlocks(uint32_t type, float a, const void* row, int64_t offset, float* y, int64_t n) {
  if (offset % kBlock == 0 && n % kBlock == 0) {
    const DF df;
    for (int64_t b = offset / kBlock; b < (offset + n) / kBlock; ++b) {
      float* yb = y + b * kBlock - offset;
      const auto ad = hn::Set(df, a * BlockScale(type, row, b));
      ForEachBlockVector(type, row, b, [&](int64_t j, auto v) {
        hn::StoreU(hn::MulAdd(ad, v, hn::LoadU(df, yb + j)), df, yb + j);
      });
    }
    return;
  }
  float values[kBlock];
  for (int64_t e = offset; e < offset + n;) {
    const int64_t b = e / kBlock, end = std::min(offset + n, (b + 1) * kBlock);
    DecodeBlock(type, row, b, values);
    for (int64_t i = e; i < end; ++i) y[i - offset] += a * values[i - b * kBlock];
    e = end;
  }
}

}  // namespace

void KvStoreRow(uint32_t kv_type, const float* x, void* dst, int64_t width) {
  if (kv_type == GGML_TYPE_Q4_0) QuantizeQ4_0(x, static_cast<block_q4_0*>(dst), width);
  else QuantizeActivations(kv_type, x, dst, width);  // F32 copy, F16, Q8_0 (GGML's bits)
}

float KvDot(uint32_t kv_type, const float* q, const void* row, int64_t offset, int64_t n) {
  switch (kv_type) {
    case GGML_TYPE_F32: return DotF32(q, static_cast<const float*>(row) + offset, n);
    case GGML_TYPE_F16: return DotF16(q, static_cast<const gguflow_fp16_t*>(row) + offset, n);
    default: return DotBlocks(kv_type, q, row, offset, n);
  }
}

void KvAxpy(uint32_t kv_type, float a, const void* row, int64_t offset, float* y, int64_t n) {
  switch (kv_type) {
    case GGML_TYPE_F32: return AxpyF32(a, static_cast<const float*>(row) + offset, y, n);
    case GGML_TYPE_F16: return AxpyF16(a, static_cast<const gguflow_fp16_t*>(row) + offset, y, n);
    default: return AxpyBlocks(kv_type, a, row, offset, y, n);
  }
}

namespace {

// Rows that every query of a block passes over while they are in L1 (a 64-element f32 head:
// 16 KiB of keys).
constexpr int64_t kRowChunk = 64;

const std::byte* RowAt(const void* rows, size_t row_bytes, int64_t j) {
  return static_cast<const std::byte*>(rows) + static_cast<size_t>(j) * row_bytes;
}

// One head's elements of a chunk of f32 cache rows, copied next to each other when several
// queries pass over them. Where a cache row holds every KV head (qwen3: 8 x 128 floats = 4 KiB),
// the head's slices of consecutive rows lie 4 KiB apart and all map to the same few L1 sets:
// of a 64-row chunk only 8 rows (the ways) stayed in L1 and every query pass went to L2 (q . k
// ran at 40 % of the rate of the same number of multiply-adds in p . v). Packed, the chunk is
// 16 KiB in a row. The values are the same floats, so every result keeps its bits.
constexpr int64_t kPackFloats = 4096;     // 16 KiB: half of L1D
// Fewer queries do not repay the copy. A decode token of Qwen2.5 (7 query heads a KV head)
// reads its rows in place: a step of 8 sequences took 19.9-21.2 ms with the copy and 18.6-19.1
// without (slots_bench, 3 rounds A B), and tg32 at 2,048 tokens was within the noise (54-58
// t/s either way).
constexpr int64_t kPackMinQueries = 8;

struct PackedChunk {
  alignas(64) float values[kPackFloats];
};

// Whether f32 rows of head width n are packed for n_q queries, and the rows per chunk then.
int64_t PackedChunkRows(uint32_t kv_type, int64_t n_q, size_t row_bytes, int64_t n) {
  if (kv_type != GGML_TYPE_F32 || row_bytes % sizeof(float) != 0) return 0;
  if (n_q < kPackMinQueries || n <= 0 || n > kPackFloats / 16) return 0;
  if (row_bytes == static_cast<size_t>(n) * sizeof(float)) return 0;  // already one head's rows in a row
  return std::min<int64_t>(kRowChunk, kPackFloats / n / 16 * 16);
}

// Copies elements [offset, offset + n) of rows [0, m) into out, n floats apart.
void PackRows(const void* rows, size_t row_bytes, int64_t m, int64_t offset, int64_t n, float* out) {
  for (int64_t j = 0; j < m; ++j)
    std::memcpy(out + j * n, reinterpret_cast<const float*>(RowAt(rows, row_bytes, j)) + offset, sizeof(float) * n);
}

// y_q[0, n) += a_q[j] * x_j for j in [0, n_rows), in order of j, for NQ queries q over the same
// rows, each y held in registers across the rows: load(j, e) is the f32 vector of row j's
// elements e.., at(j, e) one element. Element by element the operations of AxpyF32 / AxpyF16:
// MulAdd over the vectors of [0, n - n % lanes), a scalar multiply and add over the tail. Each
// query's sequence is its own (NQ only interleaves them: the multiply-adds of one query depend on
// each other row after row, so NQ > 1 keeps more of them in flight and loads each row once).
template <int NQ, class Load, class At>
void AxpyRowsHeld(const float* const* a, int64_t n_rows, float* const* y, int64_t n, const Load& load, const At& at) {
  const DF df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  int64_t e = 0;
  for (; e + 4 * lanes <= n; e += 4 * lanes) {
    hn::Vec<DF> acc[NQ][4];
    for (int q = 0; q < NQ; ++q)
      for (int v = 0; v < 4; ++v) acc[q][v] = hn::LoadU(df, y[q] + e + v * lanes);
    for (int64_t j = 0; j < n_rows; ++j) {
      const hn::Vec<DF> x[4] = {load(j, e), load(j, e + lanes), load(j, e + 2 * lanes), load(j, e + 3 * lanes)};
      for (int q = 0; q < NQ; ++q) {
        const auto va = hn::Set(df, a[q][j]);
        for (int v = 0; v < 4; ++v) acc[q][v] = hn::MulAdd(va, x[v], acc[q][v]);
      }
    }
    for (int q = 0; q < NQ; ++q)
      for (int v = 0; v < 4; ++v) hn::StoreU(acc[q][v], df, y[q] + e + v * lanes);
  }
  for (; e + lanes <= n; e += lanes) {
    hn::Vec<DF> acc[NQ];
    for (int q = 0; q < NQ; ++q) acc[q] = hn::LoadU(df, y[q] + e);
    for (int64_t j = 0; j < n_rows; ++j) {
      const auto x = load(j, e);
      for (int q = 0; q < NQ; ++q) acc[q] = hn::MulAdd(hn::Set(df, a[q][j]), x, acc[q]);
    }
    for (int q = 0; q < NQ; ++q) hn::StoreU(acc[q], df, y[q] + e);
  }
  for (; e < n; ++e) {
    for (int q = 0; q < NQ; ++q) {
      float v = y[q][e];
      for (int64_t j = 0; j < n_rows; ++j) v += a[q][j] * at(j, e);
      y[q][e] = v;
    }
  }
}

// AxpyBlocks' fast path (a head of whole blocks) over n_rows rows, one block of y held in
// registers across the rows: per row and block the same a * d and MulAdd per vector.
void AxpyBlocksHeld(uint32_t type, const float* a, const void* rows, size_t row_bytes, int64_t n_rows,
                    int64_t offset, float* y, int64_t n) {
  const DF df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  hn::Vec<DF> acc[kBlock / hn::MaxLanes(DF())];
  for (int64_t b = offset / kBlock; b < (offset + n) / kBlock; ++b) {
    float* yb = y + b * kBlock - offset;
    for (int64_t e = 0; e < kBlock; e += lanes) acc[e / lanes] = hn::LoadU(df, yb + e);
    for (int64_t j = 0; j < n_rows; ++j) {
      const std::byte* row = RowAt(rows, row_bytes, j);
      const auto ad = hn::Set(df, a[j] * BlockScale(type, row, b));
      ForEachBlockVector(type, row, b, [&](int64_t e, auto v) { acc[e / lanes] = hn::MulAdd(ad, v, acc[e / lanes]); });
    }
    for (int64_t e = 0; e < kBlock; e += lanes) hn::StoreU(acc[e / lanes], df, yb + e);
  }
}

}  // namespace

void KvDotRows(uint32_t kv_type, const float* q, int64_t q_stride, int64_t n_q, const void* rows,
               size_t row_bytes, int64_t n_rows, int64_t offset, int64_t n, float* s, int64_t s_stride) {
  // F32: several rows per pass of a query (DotF32's bits; f32 is the default cache). AVX-512:
  // 16 rows with their reductions done together (DotF32Rows16), where a row's own reduction
  // cost more than its multiply-adds for a 64-wide head; elsewhere four.
  constexpr int kF32Rows = 4;
  // f32 rows whole floats apart (always, for a cache; the ABI allows any stride): the vector
  // paths address them as floats, others go row by row through KvDot.
  const bool f32_rows = kv_type == GGML_TYPE_F32 && row_bytes % sizeof(float) == 0;
  const int64_t packed_rows = PackedChunkRows(kv_type, n_q, row_bytes, n);
  const int64_t chunk = packed_rows > 0 ? packed_rows : kRowChunk;
  PackedChunk packed;
  // Row j of the current chunk (which starts at row j0) as f32, and the floats between rows.
  const float* base = nullptr;
  int64_t j0 = 0, f32_stride = static_cast<int64_t>(row_bytes / sizeof(float));
  const auto f32 = [&](int64_t j) { return base + (j - j0) * f32_stride; };
  for (; j0 < n_rows; j0 += chunk) {
    const int64_t j1 = std::min(n_rows, j0 + chunk);
    if (packed_rows > 0) {
      PackRows(RowAt(rows, row_bytes, j0), row_bytes, j1 - j0, offset, n, packed.values);
      base = packed.values;
      f32_stride = n;
    } else if (f32_rows) {
      base = reinterpret_cast<const float*>(RowAt(rows, row_bytes, j0)) + offset;
    }
    int64_t i = 0;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    // Four queries by four rows at a time: each vector loaded feeds four multiply-adds.
    if (f32_rows && n >= 16) {
      for (; i + 4 <= n_q; i += 4) {
        int64_t j = j0;
        for (; j + 4 <= j1; j += 4)
          DotF32Queries4Rows4(q + i * q_stride, q_stride, f32(j), f32_stride, n, s + i * s_stride + j, s_stride);
        for (; j < j1; ++j)
          for (int64_t a = i; a < i + 4; ++a) s[a * s_stride + j] = DotF32(q + a * q_stride, f32(j), n);
      }
    }
#endif
    for (; i < n_q; ++i) {
      const float* qi = q + i * q_stride;
      float* si = s + i * s_stride;
      int64_t j = j0;
      if (f32_rows) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
        constexpr int kWide = 16;
        if (n >= kWide) {
          for (; j + kF32Rows < j1; j += kWide) {  // a group of 5..16 rows
            const int m = static_cast<int>(std::min<int64_t>(kWide, j1 - j));
            DotF32Rows16(qi, f32(j), f32_stride, m, n, si + j);
          }
        }
#endif
        for (; j + kF32Rows <= j1; j += kF32Rows) {
          const float* four[kF32Rows] = {f32(j), f32(j + 1), f32(j + 2), f32(j + 3)};
          DotF32Rows<kF32Rows>(qi, four, n, si + j);
        }
      }
      for (; j < j1; ++j) si[j] = KvDot(kv_type, qi, RowAt(rows, row_bytes, j), offset, n);
    }
  }
}

void KvAxpyRows(uint32_t kv_type, const float* a, int64_t a_stride, int64_t n_q, const void* rows,
                size_t row_bytes, int64_t n_rows, int64_t offset, float* y, int64_t y_stride, int64_t n) {
  const DF df;
  const hn::Rebind<hwy::float16_t, DF> dh;
  const int64_t packed_rows = PackedChunkRows(kv_type, n_q, row_bytes, n);
  PackedChunk packed;
  for (int64_t j0 = 0; j0 < n_rows; j0 += packed_rows > 0 ? packed_rows : kRowChunk) {
    const int64_t m = std::min(n_rows - j0, packed_rows > 0 ? packed_rows : kRowChunk);
    const std::byte* chunk = RowAt(rows, row_bytes, j0);
    // Row j of the chunk as f32 (packed, or in place), and the floats between rows.
    const float* f32_base = reinterpret_cast<const float*>(chunk) + offset;
    int64_t f32_stride = static_cast<int64_t>(row_bytes / sizeof(float));
    if (packed_rows > 0) {
      PackRows(chunk, row_bytes, m, offset, n, packed.values);
      f32_base = packed.values;
      f32_stride = n;
    }
    const auto f32 = [&](int64_t j) { return f32_base + j * f32_stride; };
    const auto f16 = [&](int64_t j) { return reinterpret_cast<const gguflow_fp16_t*>(RowAt(chunk, row_bytes, j)) + offset; };
    const auto load_f32 = [&](int64_t j, int64_t e) { return hn::LoadU(df, f32(j) + e); };
    const auto at_f32 = [&](int64_t j, int64_t e) { return f32(j)[e]; };
    const auto load_f16 = [&](int64_t j, int64_t e) {
      return hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(f16(j) + e)));
    };
    const auto at_f16 = [&](int64_t j, int64_t e) { return HalfToFloat(f16(j)[e]); };
    // Queries kQueriesHeld at a time, then one by one (the same operations per query).
    constexpr int kQueriesHeld = 4;
    const auto held = [&](auto nq, int64_t i) {
      constexpr int NQ = decltype(nq)::value;
      const float* ai[NQ];
      float* yi[NQ];
      for (int q = 0; q < NQ; ++q) ai[q] = a + (i + q) * a_stride + j0, yi[q] = y + (i + q) * y_stride;
      if (kv_type == GGML_TYPE_F32) AxpyRowsHeld<NQ>(ai, m, yi, n, load_f32, at_f32);
      else AxpyRowsHeld<NQ>(ai, m, yi, n, load_f16, at_f16);
    };
    int64_t i0 = 0;
    const bool float_rows = kv_type == GGML_TYPE_F16 || (kv_type == GGML_TYPE_F32 && row_bytes % sizeof(float) == 0);
    if (float_rows) {
      for (; i0 + kQueriesHeld <= n_q; i0 += kQueriesHeld) held(std::integral_constant<int, kQueriesHeld>{}, i0);
      for (; i0 < n_q; ++i0) held(std::integral_constant<int, 1>{}, i0);
    }
    for (int64_t i = i0; i < n_q; ++i) {
      const float* ai = a + i * a_stride + j0;
      float* yi = y + i * y_stride;
      if (kv_type != GGML_TYPE_F32 && offset % kBlock == 0 && n % kBlock == 0) {
        AxpyBlocksHeld(kv_type, ai, chunk, row_bytes, m, offset, yi, n);
      } else {  // a head inside a block, or f32 rows not whole floats apart
        for (int64_t j = 0; j < m; ++j) KvAxpy(kv_type, ai[j], RowAt(chunk, row_bytes, j), offset, yi, n);
      }
    }
  }
}

}  // namespace gguflow::kernels
