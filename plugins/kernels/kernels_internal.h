// Shared by the kernel plugin sources: Highway for the target this plugin is compiled for (one
// static target per library, see plugins/CMakeLists.txt), the block layouts, the argument
// bundle of a matrix product and the tiled row/activation driver every weight type uses.
//
// Nothing here is exported: plugins are built with -fvisibility=hidden and only
// `gguflow_kernels_get` (kernel_table.cc) is visible.
#pragma once

#include <hwy/highway.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "plugins/abi/kernel_abi.h"
#include "plugins/abi/quant_blocks.h"

// The 256-bit x86 paths (AVX2 intrinsics) serve AVX2, AVX3 and AVX3_DL: decode is memory
// bound, so 512-bit vectors buy little.
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
#define GGUFLOW_X86_256 1
#include <immintrin.h>
#else
#define GGUFLOW_X86_256 0
#endif

// The 8-bit multiply-accumulate vpdpbusd (VNNI) in its EVEX form, 256 and 512 bits: the
// AVX3_DL build and the avx3_vnni build (Highway's AVX3 with -mavx512vnni: Cascade Lake, Ice
// Lake and Zen 4, which lack the AVX-VNNI that Highway 1.0.3's AVX3_DL needs). Both get the same
// kernels; the loader checks the CPU feature for avx3_vnni (kernel_table.cc's requires section).
#if HWY_TARGET == HWY_AVX3_DL || (HWY_TARGET == HWY_AVX3 && defined(__AVX512VNNI__))
#define GGUFLOW_X86_VNNI 1
#else
#define GGUFLOW_X86_VNNI 0
#endif

// AVX3 and AVX3_DL (AVX-512VL) have 32 vector registers, AVX2 16: prefill tiles (activation
// rows per pass over a packed record) are sized by it.
constexpr bool kWideTargets = HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL;

namespace gguflow::kernels {

namespace hn = hwy::HWY_NAMESPACE;

// Decoded binary16 scale. F16C (every AVX2+ target) converts in one instruction with the same
// bits as the portable conversion.
static inline float HalfToFloat(gguflow_fp16_t h) {
#if GGUFLOW_X86_256
  return _cvtsh_ss(h);
#else
  return gguflow_fp16_to_f32(h);
#endif
}

// One matrix product y = W * act, exactly the arguments of the ABI's mat_mat (mat_vec is the
// case n_act == 1). W: rows [row_begin, row_end) of w_row_bytes each, n elements per row.
// act: n_act rows of act_row_bytes each, already in the weight type's activation format.
// y: y[a * y_stride + r].
struct MatMulArgs {
  const void* w;
  size_t w_row_bytes;
  int64_t n;
  int64_t row_begin, row_end;
  const void* act;
  size_t act_row_bytes;
  int64_t n_act;
  float* y;
  int64_t y_stride;
  // The pair kernels (VNNI builds, n_act > 1) prefetch the packed groups that follow the pair at
  // hand, up to this row (exclusive): one pair past row_end for a packed product (the rows a
  // thread most likely takes next, MatMatPackedEntry; it may lie past the matrix), the range's
  // end for a tile of it that is read first (ForEachMatMulTile), row_begin where nothing should
  // be (a panel that is in L2 already). See AheadPrefetch.
  int64_t prefetch_row_end;
};

// Bytes [begin, end) that a loop reads after its current work, prefetched into L2 a slice per
// step() of the loop. Why: the pair kernels (512-bit, VNNI builds, n_act > 1) read two packed
// groups side by side: two sequential streams a group apart (7.6 KiB for 896-wide Q8_0 rows)
// that start again every two groups, a pattern the hardware prefetchers follow badly. On the
// Zen 4 VM a product of 8 activation rows from DRAM took the sum of its compute and its memory
// time instead of the larger of the two (kernels_bench prefill8_packed: the 151936 x 896 Q8_0
// lm-head 12.7 ms, its compute from the caches ~6.5 ms, one pass of reading it 4.5 ms). One
// linear stream of prefetches over the next pair's bytes, spread over the current pair's
// columns, lets the memory system work while the pair computes.
// Callers spread the steps through their work, a few lines each: a burst of prefetches stalls
// the loads that follow it (the k-quant pair kernels step 8-16 times a record pair).
// Addresses are kept as integers: the walk may step past the region's end (and its last slice
// past the matrix), where pointer arithmetic would be undefined; only addresses inside it are
// prefetched.
class AheadPrefetch {
 public:
  AheadPrefetch(uintptr_t begin, uintptr_t end, size_t slice_bytes)
      : next_(begin & ~uintptr_t{63}), end_(std::max(end, begin)), slice_(slice_bytes) {
    if (end_ == begin) next_ = end_;  // empty
  }
  void step() {
    const uintptr_t stop = std::min(next_ + slice_, end_);
    for (; next_ < stop; next_ += 64)
      __builtin_prefetch(reinterpret_cast<const void*>(next_), 0, 2);  // prefetcht1: into L2
  }

 private:
  uintptr_t next_, end_;
  size_t slice_;
};

// Activation rows processed together against one weight row: each weight block is loaded and
// unpacked once per tile and multiplied with kActTile activation blocks (prefill reuse).
constexpr int kActTile = 4;
// Weight rows per cache tile: a tile of rows stays in L1 while every activation tile passes.
constexpr int64_t kRowTile = 8;

// Drives a kernel over rows and activation tiles. `Kernel::DotTile<NA>(w_row, acts, n, out)`
// computes out[i] = dot(w_row, acts[i]) for i < NA with a sequence of operations that depends
// on nothing but the row and activation i, so mat_mat equals n_act mat_vec calls and any
// row split gives the same bits.
template <class Kernel>
void RunTiled(const MatMulArgs& a) {
  const char* w = static_cast<const char*>(a.w);
  const char* act = static_cast<const char*>(a.act);
  for (int64_t r0 = a.row_begin; r0 < a.row_end; r0 += kRowTile) {
    const int64_t r1 = std::min(a.row_end, r0 + kRowTile);
    for (int64_t a0 = 0; a0 < a.n_act; a0 += kActTile) {
      const int na = static_cast<int>(std::min<int64_t>(kActTile, a.n_act - a0));
      const char* acts[kActTile];
      for (int i = 0; i < na; ++i) acts[i] = act + (a0 + i) * a.act_row_bytes;
      for (int64_t r = r0; r < r1; ++r) {
        const char* row = w + r * a.w_row_bytes;
        float out[kActTile];
        switch (na) {
          case 1: Kernel::template DotTile<1>(row, acts, a.n, out); break;
          case 2: Kernel::template DotTile<2>(row, acts, a.n, out); break;
          case 3: Kernel::template DotTile<3>(row, acts, a.n, out); break;
          default: Kernel::template DotTile<4>(row, acts, a.n, out); break;
        }
        for (int i = 0; i < na; ++i) a.y[(a0 + i) * a.y_stride + r] = out[i];
      }
    }
  }
}

#if GGUFLOW_X86_256
// Sum of the 8 float lanes (fixed order).
static inline float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// The 4 activation integers at p (one lane's worth of a packed record, kernels_packed*.cc), in
// every 32-bit lane.
static inline __m256i ActivationQuad(const int8_t* p) {
  int32_t quad;
  std::memcpy(&quad, p, 4);
  return _mm256_set1_epi32(quad);
}

// Stores the 8 results of packed group g (rows 8g .. 8g+7, one per lane) into y, only the rows
// inside [row_begin, row_end): a group is always computed whole, whatever the range.
static inline void StorePackedGroup(__m256 rows, int64_t g, int64_t row_begin, int64_t row_end, float* y) {
  const int64_t r0 = std::max(row_begin, g * 8), r1 = std::min(row_end, g * 8 + 8);
  if (r1 - r0 == 8) {
    _mm256_storeu_ps(y + r0, rows);
    return;
  }
  alignas(32) float out[8];
  _mm256_store_ps(out, rows);
  for (int64_t r = r0; r < r1; ++r) y[r] = out[r - g * 8];
}

// acc + 8 int32 lanes, each the sum of 4 adjacent products u8 * i8. Exact for the operands
// used here (|u * s| pairs stay below the 16-bit saturation of vpmaddubsw: u <= 128, |s| <=
// 127), so the VNNI builds' single instruction gives the same integers.
static inline __m256i DotU8I8Add(__m256i acc, __m256i u, __m256i s) {
#if GGUFLOW_X86_VNNI
  return _mm256_dpbusd_epi32(acc, u, s);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
#endif
}

// Bytes 0..15 = low nibbles of qs[0..15], bytes 16..31 = high nibbles (element order).
static inline __m256i NibblesX86(const uint8_t* qs) {
  const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m256i both = _mm256_set_m128i(_mm_srli_epi16(packed, 4), packed);
  return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

// 0xFF in byte j where bit j of the 32-bit mask is set.
static inline __m256i BitsToBytesX86(const uint8_t* qh_bytes) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, 4);
  const __m256i shuffle = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202,
                                            0x0101010101010101, 0x0000000000000000);
  __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(qh)), shuffle);
  bytes = _mm256_or_si256(bytes, _mm256_set1_epi64x(0x7fbfdfeff7fbfdfe));
  return _mm256_cmpeq_epi8(bytes, _mm256_set1_epi64x(-1));
}

// The stored integers q + offset (unsigned, element order) of Q4_0 (offset 8) and Q5_0 (16).
static inline __m256i UnpackStoredX86(const block_q4_0& b) { return NibblesX86(b.qs); }
static inline __m256i UnpackStoredX86(const block_q5_0& b) {
  const __m256i high = _mm256_and_si256(BitsToBytesX86(b.qh), _mm256_set1_epi8(0x10));
  return _mm256_or_si256(NibblesX86(b.qs), high);
}

// 8 int32 lanes, each the sum of 4 adjacent products u8 * i8 (as DotU8I8Add).
static inline __m256i DotU8I8(__m256i u, __m256i s) {
#if GGUFLOW_X86_VNNI
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
#else
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
#endif
}
#endif

// Portable int8 dot product of `n` elements with Highway, exact in int32: both operands are
// widened to i16 and multiplied pairwise into i32 lanes (Highway 1.0.3 has no i8 multiply-add).
static inline int32_t DotI8Portable(const int8_t* a, const int8_t* b, int n) {
#if HWY_TARGET == HWY_SCALAR
  // One lane: Highway's scalar target has no i16 pairs; plain int32 products.
  int32_t sum = 0;
  for (int i = 0; i < n; ++i) sum += int32_t{a[i]} * int32_t{b[i]};
  return sum;
#else
  const hn::ScalableTag<int32_t> d32;
  const hn::Repartition<int16_t, decltype(d32)> d16;
  const hn::Rebind<int8_t, decltype(d16)> d8;
  const int lanes = static_cast<int>(hn::Lanes(d16));
  auto sum0 = hn::Zero(d32), sum1 = hn::Zero(d32);
  int i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto va = hn::PromoteTo(d16, hn::LoadU(d8, a + i));
    const auto vb = hn::PromoteTo(d16, hn::LoadU(d8, b + i));
    sum0 = hn::ReorderWidenMulAccumulate(d32, va, vb, sum0, sum1);
  }
  int32_t sum = hn::GetLane(hn::SumOfLanes(d32, hn::Add(sum0, sum1)));
  for (; i < n; ++i) sum += int32_t{a[i]} * int32_t{b[i]};
  return sum;
#endif
}

// ---- entry points of the per-family translation units ----------------------------------------
// Each returns false when `w_type` is not its family's.

bool MatMulBlock32(uint32_t w_type, const MatMulArgs& args);  // Q4_0 Q4_1 Q5_0 Q5_1 Q8_0
bool MatMulKQuant(uint32_t w_type, const MatMulArgs& args);   // Q2_K .. Q6_K
bool MatMulFloat(uint32_t w_type, const MatMulArgs& args);    // F32 F16 BF16

// Packed (row-interleaved) layout, kernels_packed.cc: the group size for w_type on this target
// (0: none), the packing, and mat_vec/mat_mat on packed weights (row-major results to float
// rounding).
uint32_t PackedGroupRows(uint32_t w_type);
void PackWeights(uint32_t w_type, const void* src, size_t w_row_bytes, int64_t n, int64_t n_rows,
                 void* dst);
void MatMulPacked(uint32_t w_type, const MatMulArgs& args);
void DequantizePackedRow(uint32_t w_type, const void* w, size_t w_row_bytes, int64_t n,
                         int64_t row, float* dst);
// Row-major mat_vec/mat_mat through the packed kernels on panels packed on the fly
// (kernels_panels.cc); false (nothing done) for a type or row length it does not take.
bool MatMulViaPanels(uint32_t w_type, const MatMulArgs& args);
// Prefill on packed Q4_0 / Q5_0 weights (kernels_panels.cc): each 128-row tile's groups
// unpacked once into block-32 panel records (UnpackPackedGroupToPanel, kernels_packed.cc) and
// multiplied with every activation row there, where MatMulPacked would unpack each record once
// per tile of 8 activation rows; the same operands and operations, so the same bits. False
// (nothing done) for other types and for rows too long for one panel group.
bool MatMulPackedViaPanels(uint32_t w_type, const MatMulArgs& args);
void UnpackPackedGroupToPanel(uint32_t w_type, const uint8_t* group, int64_t nb, uint8_t* dst);  // Q4_0, Q5_0
// mat_vec/mat_mat on a block-32 panel (kernels_panels.cc's layout: Q8_0's packed record, Q4_0
// and Q5_0 with their stored integers unpacked to bytes); w_row_bytes = (n / 32) * 34.
void MatMulPanelBlock32(uint32_t w_type, const MatMulArgs& args);
// Rows per group of every packed layout (StorePackedGroup assumes it).
constexpr int kPackedGroupRows = 8;
// Start of packed group g (rows 8g .. 8g+7; groups keep the row-major bytes per row).
inline const uint8_t* PackedGroupAt(const void* w, size_t w_row_bytes, int64_t g) {
  return static_cast<const uint8_t*>(w) + g * kPackedGroupRows * w_row_bytes;
}
// The prefetch a pair kernel runs beside groups g, g + 1: groups g + 2 and g + 3, as far as
// they hold rows before prefetch_row_end, `slice` bytes per step() (rounded up to whole lines,
// so the walk covers the next pair somewhat before this pair's last step): callers size it so
// that their steps over one pair cover the next (block-32: two records a column; k-quants: a
// fraction of two records, several steps a record pair).
inline AheadPrefetch NextPairPrefetch(const void* w, size_t w_row_bytes, int64_t g, int64_t prefetch_row_end,
                                      size_t slice) {
  const int64_t groups_end = (prefetch_row_end + kPackedGroupRows - 1) / kPackedGroupRows;
  // As integers: prefetch_row_end may lie past the matrix (MatMatPackedEntry).
  const auto group_at = [&](int64_t group) {
    return reinterpret_cast<uintptr_t>(w) + static_cast<uintptr_t>(group) * kPackedGroupRows * w_row_bytes;
  };
  return AheadPrefetch(group_at(std::min(g + 2, groups_end)), group_at(std::min(g + 4, groups_end)), slice);
}
// Drives a mat_mat (args.n_act > 1) in tiles: weight rows in tiles of kMatMulTileRows that
// stay in L2 while the activation rows pass, NA at a time (the kernel's widest tile that fits
// the vector registers), then what is left in tiles of halving powers of two, then one at a
// time, as tile(rows, a0, std::integral_constant<int, size>{}) with `rows` = args limited to
// the tile. Tile edges fall on multiples of kMatMulTileRows (so of a packed group) whatever
// row_begin is: an edge inside a group would compute that group twice. mat_vec (n_act == 1)
// is one call over the whole range. Used by the packed layouts and the row-major block-32
// prefill.
constexpr int64_t kMatMulTileRows = 16 * kPackedGroupRows;
constexpr int LargestPowerOfTwoBelow(int n) {
  int p = 1;
  while (p * 2 < n) p *= 2;
  return p;
}
// call(a0, integral_constant<S>) for S = kSize, kSize / 2, ..., 2 where S rows remain of
// [a0, n_act), advancing a0; fewer than 2 * kSize rows left on entry leave fewer than 2.
template <int kSize, class Call>
void ForEachPowerOfTwoTile(int64_t& a0, int64_t n_act, Call&& call) {
  if constexpr (kSize >= 2) {
    if (a0 + kSize <= n_act) {
      call(a0, std::integral_constant<int, kSize>{});
      a0 += kSize;
    }
    ForEachPowerOfTwoTile<kSize / 2>(a0, n_act, call);
  }
}
template <int NA, class Tile>
void ForEachMatMulTile(const MatMulArgs& args, Tile&& tile) {
  if (args.n_act == 1) return tile(args, int64_t{0}, std::integral_constant<int, 1>{});
  for (int64_t t0 = args.row_begin; t0 < args.row_end;) {
    MatMulArgs rows = args;
    rows.row_begin = t0;
    rows.row_end = std::min(args.row_end, (t0 / kMatMulTileRows + 1) * kMatMulTileRows);
    // The first activation tile reads the rows from memory, and prefetches on into the next
    // row tile; the others find them in L2.
    const auto rows_for = [&](int64_t a0) {
      rows.prefetch_row_end = a0 == 0 ? args.prefetch_row_end : rows.row_begin;
      return rows;
    };
    int64_t a0 = 0;
    for (; a0 + NA <= args.n_act; a0 += NA) tile(rows_for(a0), a0, std::integral_constant<int, NA>{});
    // What is left (fewer than NA rows: a server step of 2-7 sequences) in tiles of halving
    // powers of two, so that no weight record is read once per activation row.
    ForEachPowerOfTwoTile<LargestPowerOfTwoBelow(NA)>(a0, args.n_act, [&](int64_t a, auto na) { tile(rows_for(a), a, na); });
    for (; a0 < args.n_act; ++a0) tile(rows_for(a0), a0, std::integral_constant<int, 1>{});
    t0 = rows.row_end;
  }
}

void DequantizeRow(uint32_t type, const void* src, float* dst, int64_t n);

// dst[0..n) = row `row` of a packed k-quant matrix whose groups hold one record of
// sizeof(Block) * 8 bytes per super-block: unpack(record, r) gives row r's block back.
template <class Block, class Unpack>
void DequantizePackedSuperBlocks(uint32_t w_type, const void* w, size_t w_row_bytes, int64_t n, int64_t row,
                                 float* dst, Unpack unpack) {
  const uint8_t* group = PackedGroupAt(w, w_row_bytes, row / kPackedGroupRows);
  for (int64_t b = 0; b < n / 256; ++b) {
    const Block blk = unpack(group + b * kPackedGroupRows * sizeof(Block), static_cast<int>(row % kPackedGroupRows));
    DequantizeRow(w_type, &blk, dst + 256 * b, 256);
  }
}

// The k-quant packed layouts (kernels_packed_q4k.cc, kernels_packed_q6k.cc), reached through
// the four functions above.
void PackQ4K(const void* src, size_t w_row_bytes, int64_t n, int64_t n_rows, void* dst);
void DequantizePackedRowQ4K(const void* w, size_t w_row_bytes, int64_t n, int64_t row, float* dst);
void MatMulPackedQ4K(const MatMulArgs& args);
void PackQ6K(const void* src, size_t w_row_bytes, int64_t n, int64_t n_rows, void* dst);
void DequantizePackedRowQ6K(const void* w, size_t w_row_bytes, int64_t n, int64_t row, float* dst);
void MatMulPackedQ6K(const MatMulArgs& args);

void QuantizeActivations(uint32_t act_type, const float* x, void* dst, int64_t n);

// Scalar unpacking shared by dequantize.cc and the portable dot paths: the integer weights of
// one block in element order (see the per-family sources for their meaning).
void UnpackBlock32(uint32_t w_type, const void* block, int8_t q[32]);

// Per-16-element scale/coefficient decoding of one k-quant super-block:
//   value[e] = d * sc[e/16] * (q[e] - offset) - dmin * coef[e/16]   (formats with a min)
//   value[e] = d * sc[e/16] * (q[e] - offset)                       (Q3_K, Q6_K: coef = sc)
struct KScales {
  alignas(16) int8_t sc[16];
  alignas(16) int8_t coef[16];
  float d;
  float dmin;
};
void PrepareKScales(uint32_t w_type, const void* block, KScales* s);
void UnpackKQuant(uint32_t w_type, const void* block, uint8_t q[256]);
int KQuantOffset(uint32_t w_type);  // 0 (min formats), 4 (Q3_K) or 32 (Q6_K)
bool KQuantHasMin(uint32_t w_type);

// f32 primitives (kernels_f32_primitives.cc).
float DotF32(const float* a, const float* b, int64_t n);
void AxpyF32(float a, const float* x, float* y, int64_t n);
void ScaleF32(float a, float* x, int64_t n);
void AddF32(const float* a, const float* b, float* y, int64_t n);
void MulF32(const float* a, const float* b, float* y, int64_t n);
void RmsNormF32(const float* x, const float* w, float* y, int64_t n, float eps);
float SoftmaxF32(float* x, int64_t n);
void RopeF32(float* x, int64_t n_rot, const float* cos_sin, int neox);
void SiluMulF32(const float* gate, const float* up, float* y, int64_t n);
void GeluTanhF32(const float* x, float* y, int64_t n);

// KV cache rows in F32 / F16 / Q8_0 / Q4_0 (kv_cache_rows.cc; the ABI's kv_* entries).
void KvStoreRow(uint32_t kv_type, const float* x, void* dst, int64_t width);
float KvDot(uint32_t kv_type, const float* q, const void* row, int64_t offset, int64_t n);
void KvAxpy(uint32_t kv_type, float a, const void* row, int64_t offset, float* y, int64_t n);
void KvDotRows(uint32_t kv_type, const float* q, int64_t q_stride, int64_t n_q, const void* rows,
               size_t row_bytes, int64_t n_rows, int64_t offset, int64_t n, float* s, int64_t s_stride);
void KvAxpyRows(uint32_t kv_type, const float* a, int64_t a_stride, int64_t n_q, const void* rows,
                size_t row_bytes, int64_t n_rows, int64_t offset, float* y, int64_t y_stride, int64_t n);

}  // namespace gguflow::kernels
