// Packed (row-interleaved) layout of Q4_0, Q5_0 and Q8_0 weights and its matrix kernels, x86 AVX2 and
// up (the ABI's pack / mat_vec_packed / mat_mat_packed; other targets offer no packed layout).
//
// Why: in the row-major layout a Q5_0 mat_vec spends ~18 vector instructions per 32-element
// block (nibble split, the 5th bit spread from 4 bytes to 32, a half-float scale converted and
// broadcast, an 8-lane float accumulator per row) and decode is compute-bound at ~13 GB/s a
// core, well under the memory bandwidth. Packing 8 rows so that each 32-bit lane of a register
// holds 4 elements of one row (GGML's "8x4" interleave) makes lane r row r all the way: one
// vpmaddubsw multiplies 4 elements of each of the 8 rows with the same 4 activation integers,
// the 16-bit products of a whole block are added before widening, and the 8 rows' block dots
// come out in one register that is scaled by the 8 scales (one conversion) and accumulated with
// one fused multiply-add. No per-row horizontal sum is left. ~7 instructions per row and block.
//
// Layout: groups of kGroupRows = 8 consecutive rows; within a group, block column b (elements
// 32b .. 32b+31 of all 8 rows) is stored as one record of 8 * sizeof(block) bytes. "Register k"
// is elements 4k .. 4k+3 of every row, byte 4r+e holding element 4k+e of row r (k < 8):
//   d   [8] fp16        the 8 rows' block scales, row order                       (16 bytes)
//   Q4_0: qs [4][32] u8 pair p, byte 4r+e = byte 4p+e of row r's qs: its low nibble is
//                       register p's integer, its high nibble register p+4's (elements 4p+e
//                       and 16+4p+e, as in the row-major block)                   (128 bytes)
//   Q5_0: v [5][32] u8  five planes of the stored 5-bit integers u = q + 16 (see below)
//                                                                                 (160 bytes)
//   Q8_0: qs [8][32] i8 register k, byte 4r+e = integer 4k+e of row r             (256 bytes)
// Q5_0: 176 bytes = 8 * 22; Q4_0: 144 = 8 * 18; Q8_0: 272 = 8 * 34. Groups follow each other,
// so the packed matrix has the row-major size and is read as one sequential stream.
//
// Q5_0's planes: byte 4r+e of plane j holds in bits 0-4 register j's u (j < 5) and in bits 5-7
// three of the 15 bits of registers 5, 6, 7:
//   plane 0: u5 bits 0-2     plane 1: u6 bits 0-2     plane 2: u7 bits 0-2
//   plane 3: u5 bits 3-4 (at 5-6), u7 bit 3 (at 7)    plane 4: u6 bits 3-4, u7 bit 4
// so registers 0-4 cost one mask each and 5-7 a few masks and shifts: 23 vector operations for
// the 8 registers where nibble pairs plus a separate 5th-bit plane cost 35. Q5_0 decode is
// bound by vector operations and loads when the weights come from the caches: 64 x 896, avx2,
// one core of this EPYC VM, 34.7 -> 38.0 GB/s (from DRAM the kernel already ran at 0.9 of the
// streaming bandwidth, and still does).
//
// Results: per row and block the same exact integer dot as the row-major kernel, times
// float(d_w) * float(d_a), fused into the row's accumulator in block order; the row-major kernel
// accumulates in 8 lanes and sums them at the end instead, so the two agree to float rounding
// (within kernel_parity_test's bound, tested), not bit for bit. A row's result depends on
// nothing but the row and the activation: not on the row range, the group's other rows or the
// number of activation rows of mat_mat (tested bit for bit).
#include <cstring>
#include <type_traits>

#include "plugins/kernels/kernels_internal.h"

namespace gguflow::kernels {
namespace {

constexpr int kGroupRows = kPackedGroupRows;

// kOffset: the nibble formats store q + kOffset (unsigned); Q8_0 stores q itself (signed
// bytes). kDotOffset: the unsigned operand of the 8-bit products is the stored integer plus
// kDotOffset - kOffset, and minus_offset_sum takes kDotOffset * (sum of the activation integers) off
// again. Q8_0 on AVX2/AVX3: 0, the sign trick (|q| times the activation with q's sign, one
// vpsignb per activation row and register), because q + 128 would saturate vpmaddubsw's 16-bit
// pair sums; with VNNI (AVX3_DL, avx3_vnni) vpdpbusd adds the products in 32 bits, so q + 128 (q xor 0x80, once per
// register for all activation rows) is exact and the per-activation vpsignb goes.
constexpr int kQ8DotOffset = GGUFLOW_X86_VNNI ? 128 : 0;
struct PackedQ4_0 {
  using Block = block_q4_0;
  static constexpr bool kFivePlanes = false;
  static constexpr bool kBytes = false;
  static constexpr int kOffset = 8;  // stored integers are q + 8 in [0, 16)
  static constexpr int kDotOffset = kOffset;
  static constexpr int kInt16Terms = 8;  // see BlockDots
};
struct PackedQ5_0 {
  using Block = block_q5_0;
  static constexpr bool kFivePlanes = true;  // the five-plane layout below
  static constexpr bool kBytes = false;
  static constexpr int kOffset = 16;  // stored integers are q + 16 in [0, 32)
  static constexpr int kDotOffset = kOffset;
  static constexpr int kInt16Terms = 4;
};
struct PackedQ8_0 {
  using Block = block_q8_0;
  static constexpr bool kFivePlanes = false;
  static constexpr bool kBytes = true;  // one byte per integer: Q8_0's record
  static constexpr int kOffset = 0;  // signed bytes
  static constexpr int kDotOffset = kQ8DotOffset;
  static constexpr int kInt16Terms = 1;
};

// Prefill panels (kernels_panels.cc) of Q4_0 and Q5_0: Q8_0's record with the stored integers
// q + kOffset unpacked to one byte each, so the inner loop is a load where the packed layouts
// unpack nibbles or planes, and a panel packs with a few vector instructions per block. The
// same exact integer block dots and float operations as PackedQ4_0 / PackedQ5_0: the same bits.
struct PanelQ4_0 {
  using Block = block_q8_0;  // the record's geometry: d, then 32 bytes
  static constexpr bool kFivePlanes = false;
  static constexpr bool kBytes = true;
  static constexpr int kOffset = PackedQ4_0::kOffset;
  static constexpr int kDotOffset = kOffset;
  static constexpr int kInt16Terms = PackedQ4_0::kInt16Terms;
};
struct PanelQ5_0 {
  using Block = block_q8_0;
  static constexpr bool kFivePlanes = false;
  static constexpr bool kBytes = true;
  static constexpr int kOffset = PackedQ5_0::kOffset;
  static constexpr int kDotOffset = kOffset;
  static constexpr int kInt16Terms = PackedQ5_0::kInt16Terms;
};

template <class Fmt>
struct PackedLayout {
  static constexpr size_t kColumnBytes = kGroupRows * sizeof(typename Fmt::Block);
  static constexpr size_t kScalesAt = 0;
  static constexpr size_t kNibblesAt = 16;  // Q4_0: qs[4][32]
  static constexpr size_t kPlanesAt = 16;   // Q5_0: v[5][32]
  static constexpr size_t kBytesAt = 16;    // Q8_0: qs[8][32]
  static_assert((Fmt::kFivePlanes ? kPlanesAt + 160 : Fmt::kBytes ? kBytesAt + 256 : kNibblesAt + 128) ==
                    kColumnBytes,
                "packed record must keep the block bytes");
};

// Q5_0's stored integers u = q + 16 of one block, element order.
void StoredQ5_0(const block_q5_0& blk, uint8_t u[32]) {
  uint32_t qh;  // bit j: 5th bit of element j
  std::memcpy(&qh, blk.qh, 4);
  for (int j = 0; j < 16; ++j) {
    u[j] = static_cast<uint8_t>((blk.qs[j] & 0x0F) | ((qh >> j) & 1) << 4);
    u[j + 16] = static_cast<uint8_t>((blk.qs[j] >> 4) | ((qh >> (j + 16)) & 1) << 4);
  }
}

// Byte 4r+e of Q5_0's five planes from register values u_k = u[4k+e] (see the layout above).
void StoreFivePlanes(const uint8_t u[32], int e, uint8_t* planes, int r) {
  const auto v = [&](int k) { return static_cast<unsigned>(u[4 * k + e]); };
  const unsigned spare[5] = {v(5) & 7, v(6) & 7, v(7) & 7, (v(5) >> 3) | ((v(7) >> 3) & 1) << 2,
                             (v(6) >> 3) | (v(7) >> 4) << 2};
  for (int j = 0; j < 5; ++j) planes[32 * j + 4 * r + e] = static_cast<uint8_t>(v(j) | spare[j] << 5);
}

// The inverse: u[4k+e] for every register k.
void LoadFivePlanes(const uint8_t* planes, int r, int e, uint8_t u[32]) {
  const auto plane = [&](int j) { return static_cast<unsigned>(planes[32 * j + 4 * r + e]); };
  for (int j = 0; j < 5; ++j) u[4 * j + e] = static_cast<uint8_t>(plane(j) & 0x1F);
  u[20 + e] = static_cast<uint8_t>((plane(0) >> 5) | ((plane(3) >> 5) & 3) << 3);
  u[24 + e] = static_cast<uint8_t>((plane(1) >> 5) | ((plane(4) >> 5) & 3) << 3);
  u[28 + e] = static_cast<uint8_t>((plane(2) >> 5) | (plane(3) >> 7) << 3 | (plane(4) >> 7) << 4);
}

template <class Fmt>
void PackMatrix(const void* src, size_t w_row_bytes, int64_t n, int64_t n_rows, void* dst) {
  using L = PackedLayout<Fmt>;
  const int64_t nb = n / 32;
  for (int64_t g = 0; g * kGroupRows < n_rows; ++g) {
    const char* rows = static_cast<const char*>(src) + g * kGroupRows * w_row_bytes;
    uint8_t* group = static_cast<uint8_t*>(dst) + g * kGroupRows * w_row_bytes;
    for (int64_t b = 0; b < nb; ++b) {
      uint8_t* rec = group + b * L::kColumnBytes;
      for (int r = 0; r < kGroupRows; ++r) {
        const auto& blk = reinterpret_cast<const typename Fmt::Block*>(rows + r * w_row_bytes)[b];
        std::memcpy(rec + L::kScalesAt + 2 * r, &blk.d, 2);
        if constexpr (Fmt::kFivePlanes) {
          uint8_t u[32];
          StoredQ5_0(blk, u);
          for (int e = 0; e < 4; ++e) StoreFivePlanes(u, e, rec + L::kPlanesAt, r);
        } else if constexpr (Fmt::kBytes) {
          for (int k = 0; k < 8; ++k) std::memcpy(rec + L::kBytesAt + 32 * k + 4 * r, blk.qs + 4 * k, 4);
        } else {
          // Byte 4p+e of qs: low nibble element 4p+e, high nibble element 16+4p+e.
          for (int p = 0; p < 4; ++p) std::memcpy(rec + L::kNibblesAt + 32 * p + 4 * r, blk.qs + 4 * p, 4);
        }
      }
    }
  }
}

// Row r of a packed group, block column b, back in its row-major block (the inverse of
// PackMatrix for one block).
template <class Fmt>
typename Fmt::Block UnpackRecordRow(const uint8_t* rec, int r) {
  using L = PackedLayout<Fmt>;
  typename Fmt::Block blk;
  std::memcpy(&blk.d, rec + L::kScalesAt + 2 * r, 2);
  if constexpr (Fmt::kFivePlanes) {
    uint8_t u[32];
    for (int e = 0; e < 4; ++e) LoadFivePlanes(rec + L::kPlanesAt, r, e, u);
    uint32_t qh = 0;
    for (int j = 0; j < 16; ++j) {
      blk.qs[j] = static_cast<uint8_t>((u[j] & 0x0F) | (u[j + 16] & 0x0F) << 4);
      qh |= static_cast<uint32_t>(u[j] >> 4) << j | static_cast<uint32_t>(u[j + 16] >> 4) << (j + 16);
    }
    std::memcpy(blk.qh, &qh, 4);
  } else if constexpr (Fmt::kBytes) {
    for (int k = 0; k < 8; ++k) std::memcpy(blk.qs + 4 * k, rec + L::kBytesAt + 32 * k + 4 * r, 4);
  } else {
    for (int p = 0; p < 4; ++p) std::memcpy(blk.qs + 4 * p, rec + L::kNibblesAt + 32 * p + 4 * r, 4);
  }
  return blk;
}

template <class Fmt>
void DequantizePackedRowOf(uint32_t w_type, const void* w, size_t w_row_bytes, int64_t n,
                           int64_t row, float* dst) {
  using L = PackedLayout<Fmt>;
  const auto* group = PackedGroupAt(w, w_row_bytes, row / kGroupRows);
  for (int64_t b = 0; b < n / 32; ++b) {
    const auto blk = UnpackRecordRow<Fmt>(group + b * L::kColumnBytes, static_cast<int>(row % kGroupRows));
    DequantizeRow(w_type, &blk, dst + 32 * b, 32);
  }
}

#if GGUFLOW_X86_256

// Register K of a record: byte 4r+e holds the stored integer of element 4K+e of row r, the
// unsigned operand u of vpmaddubsw / vpdpbusd (q + offset for Q4_0 and Q5_0, |q| or q + 128 for
// Q8_0, see kDotOffset); for Q8_0 also
// q itself, whose sign the activation takes. `planes`: Q5_0's five planes, loaded once per
// record.
struct RegisterWeights {
  __m256i u, q;
};
template <class Fmt, int K>
inline RegisterWeights WeightsOf(const uint8_t* rec, const __m256i* planes) {
  using L = PackedLayout<Fmt>;
  const auto mask = [](__m256i v, int m) { return _mm256_and_si256(v, _mm256_set1_epi8(static_cast<char>(m))); };
  if constexpr (Fmt::kFivePlanes) {
    // Masking before each 16-bit shift keeps bits from crossing into the neighbour byte.
    if constexpr (K < 5) return {mask(planes[K], 0x1F), _mm256_setzero_si256()};
    const __m256i low = _mm256_srli_epi16(mask(planes[K - 5], 0xE0), 5);  // bits 0-2
    if constexpr (K < 7) {
      return {_mm256_or_si256(low, _mm256_srli_epi16(mask(planes[K - 2], 0x60), 2)), _mm256_setzero_si256()};  // bits 3-4
    } else {
      const __m256i top = _mm256_or_si256(_mm256_srli_epi16(mask(planes[3], 0x80), 4),   // bit 3
                                          _mm256_srli_epi16(mask(planes[4], 0x80), 3));  // bit 4
      return {_mm256_or_si256(low, top), _mm256_setzero_si256()};
    }
  } else if constexpr (Fmt::kBytes) {
    (void)planes, (void)mask;
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rec + L::kBytesAt + 32 * K));
    if constexpr (Fmt::kOffset > 0) return {q, q};  // panels: stored unsigned already
    if constexpr (Fmt::kDotOffset == 128) return {_mm256_xor_si256(q, _mm256_set1_epi8(static_cast<char>(0x80))), q};
    return {_mm256_sign_epi8(q, q), q};
  } else {
    (void)planes;
    const __m256i pair = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rec + L::kNibblesAt + 32 * (K % 4)));
    return {mask(K < 4 ? pair : _mm256_srli_epi16(pair, 4), 0x0F), _mm256_setzero_si256()};
  }
}

// The signed operand of register K for activation block a: its integers 4K .. 4K+3 in every
// lane, for Q8_0's sign trick with the sign of the weight.
template <class Fmt, int K>
inline __m256i ActivationOf(const RegisterWeights& w, const block_q8_0& a) {
  const __m256i act = ActivationQuad(a.qs + 4 * K);
  if constexpr (Fmt::kDotOffset == 0) return _mm256_sign_epi8(act, w.q);
  (void)w;
  return act;
}

// lanes[i] lane r = the exact integer dot of row r's stored integers with activation block
// a[i] (the offset over-count not yet taken off), for NA activation rows; the record is
// unpacked once for all of them. AVX2: vpmaddubsw gives 16-bit pair sums of at most
// 2 * max(u) * 128, so Fmt::kInt16Terms registers' products add up before widening (Q4_0:
// 8 * 3840, Q5_0: 4 * 7936, Q8_0: 1 * 32512, all below 2^15); VNNI: vpdpbusd. Integer sums
// are exact, so the lanes are the same whatever NA and the order of additions.
template <class Fmt, int NA>
inline void BlockDots(const uint8_t* rec, const block_q8_0* const* a, __m256i* lanes) {
  using L = PackedLayout<Fmt>;
  __m256i planes[5];
  if constexpr (Fmt::kFivePlanes)
    for (int j = 0; j < 5; ++j) planes[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rec + L::kPlanesAt + 32 * j));
  for (int i = 0; i < NA; ++i) lanes[i] = _mm256_setzero_si256();
#if !GGUFLOW_X86_VNNI
  __m256i sum16[NA];
  const __m256i ones = _mm256_set1_epi16(1);
#endif
  const auto step = [&](auto k) {
    constexpr int K = decltype(k)::value;
    const RegisterWeights w = WeightsOf<Fmt, K>(rec, planes);
    for (int i = 0; i < NA; ++i) {
      const __m256i s = ActivationOf<Fmt, K>(w, *a[i]);
#if GGUFLOW_X86_VNNI
      lanes[i] = DotU8I8Add(lanes[i], w.u, s);
#else
      const __m256i p = _mm256_maddubs_epi16(w.u, s);
      sum16[i] = K % Fmt::kInt16Terms == 0 ? p : _mm256_add_epi16(sum16[i], p);
      if (K % Fmt::kInt16Terms == Fmt::kInt16Terms - 1)
        lanes[i] = _mm256_add_epi32(lanes[i], _mm256_madd_epi16(sum16[i], ones));
#endif
    }
  };
  step(std::integral_constant<int, 0>{});
  step(std::integral_constant<int, 1>{});
  step(std::integral_constant<int, 2>{});
  step(std::integral_constant<int, 3>{});
  step(std::integral_constant<int, 4>{});
  step(std::integral_constant<int, 5>{});
  step(std::integral_constant<int, 6>{});
  step(std::integral_constant<int, 7>{});
}

// The activation side of block columns [b0, b0 + count) of one activation row: float(d_a) and
// -offset * (sum of the block's integers), minus the term the dot with the stored (offset)
// integers over-counts (negated so that the 512-bit path starts its integer sums there).
struct ActivationTerms {
  static constexpr int64_t kBlocks = 512;  // rows of up to 16384 elements in one pass
  int64_t b0 = -1, count = 0;
  float scale[kBlocks];
  int32_t minus_offset_sum[kBlocks];

  template <class Fmt>
  void Fill(const block_q8_0* act, int64_t begin, int64_t end) {
    b0 = begin;
    count = end - begin;
    for (int64_t i = 0; i < count; ++i) {
      const block_q8_0& a = act[b0 + i];
      scale[i] = HalfToFloat(a.d);
      if constexpr (Fmt::kDotOffset > 0) {
        const __m256i offset = _mm256_set1_epi8(static_cast<char>(Fmt::kDotOffset));
        const __m256i lanes = DotU8I8(offset, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.qs)));
        __m128i s = _mm_add_epi32(_mm256_castsi256_si128(lanes), _mm256_extracti128_si256(lanes, 1));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
        minus_offset_sum[i] = -_mm_cvtsi128_si32(s);
      }
    }
  }
};

// acc[i] lane r + sum over the block columns of t[i] of the terms of row r and activation row
// i: float(d_w) * float(d_a) times the float of the exact block dot, one fused multiply-add per
// block in block order (the same operations for every NA).
template <class Fmt, int NA>
inline void DotColumns(const uint8_t* group, const block_q8_0* const* act, const ActivationTerms* t,
                       __m256* acc) {
  using L = PackedLayout<Fmt>;
  for (int64_t c = 0; c < t[0].count; ++c) {
    const int64_t b = t[0].b0 + c;
    const uint8_t* rec = group + b * L::kColumnBytes;
    const block_q8_0* blocks[NA];
    for (int i = 0; i < NA; ++i) blocks[i] = act[i] + b;
    __m256i lanes[NA];
    BlockDots<Fmt, NA>(rec, blocks, lanes);
    const __m256 w_scales = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rec + L::kScalesAt)));
    for (int i = 0; i < NA; ++i) {
      if constexpr (Fmt::kDotOffset > 0) lanes[i] = _mm256_add_epi32(lanes[i], _mm256_set1_epi32(t[i].minus_offset_sum[c]));
      const __m256 scales = _mm256_mul_ps(w_scales, _mm256_set1_ps(t[i].scale[c]));
      acc[i] = _mm256_fmadd_ps(scales, _mm256_cvtepi32_ps(lanes[i]), acc[i]);
    }
  }
}

#if GGUFLOW_X86_VNNI
// The 256-bit (rec, 32 * j) of two records side by side: rec0's in the low half, rec1's in the high.
inline __m512i LoadPair(const uint8_t* rec0, const uint8_t* rec1, size_t at) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(rec0 + at))),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rec1 + at)), 1);
}

// WeightsOf's unsigned operand u of register K for two records at once (16 rows): the same
// byte operations on both halves, done once in 512 bits instead of twice in 256.
template <class Fmt, int K>
inline __m512i WeightsOfPair(const uint8_t* rec0, const uint8_t* rec1, const __m512i* planes) {
  using L = PackedLayout<Fmt>;
  const auto mask = [](__m512i v, int m) { return _mm512_and_si512(v, _mm512_set1_epi8(static_cast<char>(m))); };
  if constexpr (Fmt::kFivePlanes) {
    (void)rec0, (void)rec1;
    if constexpr (K < 5) return mask(planes[K], 0x1F);
    const __m512i low = _mm512_srli_epi16(mask(planes[K - 5], 0xE0), 5);  // bits 0-2
    if constexpr (K < 7) return _mm512_or_si512(low, _mm512_srli_epi16(mask(planes[K - 2], 0x60), 2));  // bits 3-4
    const __m512i top = _mm512_or_si512(_mm512_srli_epi16(mask(planes[3], 0x80), 4),   // bit 3
                                        _mm512_srli_epi16(mask(planes[4], 0x80), 3));  // bit 4
    return _mm512_or_si512(low, top);
  } else if constexpr (Fmt::kBytes) {
    (void)planes, (void)mask;
    const __m512i q = LoadPair(rec0, rec1, L::kBytesAt + 32 * K);
    if constexpr (Fmt::kOffset > 0) return q;  // panels: stored unsigned already
    return _mm512_xor_si512(q, _mm512_set1_epi8(static_cast<char>(0x80)));  // Q8_0: q + 128
  } else {
    (void)planes;
    const __m512i pair = LoadPair(rec0, rec1, L::kNibblesAt + 32 * (K % 4));
    return mask(K < 4 ? pair : _mm512_srli_epi16(pair, 4), 0x0F);
  }
}

// Two groups at once in 512-bit vectors (VNNI builds): lanes 0-7 are group g0's rows, lanes 8-15
// group g1's, so each activation quad is broadcast once for 16 rows and one vpdpbusd does the
// work of two. Every lane gets exactly DotColumns' integer and float operations (the same
// unsigned operands, the same exact dots, the same scale product and fused add per block), so a
// row's bits do not depend on whether its group went alone or in a pair.
// Prefill only (NA > 1): for decode (NA = 1) the pairs ran the 151936 x 896 Q8_0 lm-head at
// about half the speed of single groups (kernels_bench decode_packed, 1 thread: ~20 vs ~9 ms),
// so mat_vec keeps the 256-bit path.
template <class Fmt, int NA>
inline void DotColumnsPair(const uint8_t* group0, const uint8_t* group1, const block_q8_0* const* act,
                           const ActivationTerms* t, AheadPrefetch& ahead, __m512* acc) {
  static_assert(Fmt::kDotOffset > 0, "VNNI multiplies every packed block-32 format unsigned by signed");
  using L = PackedLayout<Fmt>;
  for (int64_t c = 0; c < t[0].count; ++c) {
    const int64_t b = t[0].b0 + c;
    const uint8_t* rec0 = group0 + b * L::kColumnBytes;
    const uint8_t* rec1 = group1 + b * L::kColumnBytes;
    ahead.step();
    __m512i planes[5];
    if constexpr (Fmt::kFivePlanes)
      for (int j = 0; j < 5; ++j) planes[j] = LoadPair(rec0, rec1, L::kPlanesAt + 32 * j);
    // Each row's integer sum starts at -offset * sum(a) (exact: the same integers in another
    // order of addition), which saves a subtraction per activation row and block.
    __m512i lanes[NA];
    for (int i = 0; i < NA; ++i) lanes[i] = _mm512_set1_epi32(t[i].minus_offset_sum[c]);
    const auto step = [&](auto k) {
      constexpr int K = decltype(k)::value;
      const __m512i u = WeightsOfPair<Fmt, K>(rec0, rec1, planes);
      for (int i = 0; i < NA; ++i) {
        int32_t quad;
        std::memcpy(&quad, act[i][b].qs + 4 * K, 4);
        lanes[i] = _mm512_dpbusd_epi32(lanes[i], u, _mm512_set1_epi32(quad));
      }
    };
    step(std::integral_constant<int, 0>{});
    step(std::integral_constant<int, 1>{});
    step(std::integral_constant<int, 2>{});
    step(std::integral_constant<int, 3>{});
    step(std::integral_constant<int, 4>{});
    step(std::integral_constant<int, 5>{});
    step(std::integral_constant<int, 6>{});
    step(std::integral_constant<int, 7>{});
    const __m256i halves = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rec0 + L::kScalesAt))),
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(rec1 + L::kScalesAt)), 1);
    const __m512 w_scales = _mm512_cvtph_ps(halves);
    for (int i = 0; i < NA; ++i) {
      const __m512 scales = _mm512_mul_ps(w_scales, _mm512_set1_ps(t[i].scale[c]));
      acc[i] = _mm512_fmadd_ps(scales, _mm512_cvtepi32_ps(lanes[i]), acc[i]);
    }
  }
}
#endif

// y_i[r] = dot(row r, activation row i) for r in [row_begin, row_end) and NA activation rows
// (mat_vec: NA = 1). A group's 8 rows are computed together whatever the range (lane r is row
// r, independent of the other lanes), and only the rows in the range are stored.
// The pairs prefetch the groups after them up to row prefetch_row_end (AheadPrefetch).
template <class Fmt, int NA>
void MulPacked(const void* w, size_t w_row_bytes, int64_t n, int64_t row_begin, int64_t row_end,
               int64_t prefetch_row_end, const block_q8_0* const* act, float* const* y) {
  const int64_t nb = n / 32;
  ActivationTerms terms[NA];
  int64_t g = row_begin / kGroupRows;
#if GGUFLOW_X86_VNNI
  using L = PackedLayout<Fmt>;
  for (; NA > 1 && (g + 1) * kGroupRows < row_end; g += 2) {  // group g + 1 has rows in the range
    const uint8_t* group0 = PackedGroupAt(w, w_row_bytes, g);
    const uint8_t* group1 = PackedGroupAt(w, w_row_bytes, g + 1);
    AheadPrefetch ahead = NextPairPrefetch(w, w_row_bytes, g, prefetch_row_end, 2 * L::kColumnBytes);
    __m512 acc[NA];
    for (int i = 0; i < NA; ++i) acc[i] = _mm512_setzero_ps();
    for (int64_t b0 = 0; b0 < nb; b0 += ActivationTerms::kBlocks) {
      if (terms[0].b0 != b0)
        for (int i = 0; i < NA; ++i) terms[i].template Fill<Fmt>(act[i], b0, std::min(nb, b0 + ActivationTerms::kBlocks));
      DotColumnsPair<Fmt, NA>(group0, group1, act, terms, ahead, acc);
    }
    for (int i = 0; i < NA; ++i) {
      StorePackedGroup(_mm512_castps512_ps256(acc[i]), g, row_begin, row_end, y[i]);
      StorePackedGroup(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[i]), 1)), g + 1, row_begin,
                       row_end, y[i]);
    }
  }
#endif
  for (; g * kGroupRows < row_end; ++g) {
    const uint8_t* group = PackedGroupAt(w, w_row_bytes, g);
    __m256 acc[NA];
    for (int i = 0; i < NA; ++i) acc[i] = _mm256_setzero_ps();
    for (int64_t b0 = 0; b0 < nb; b0 += ActivationTerms::kBlocks) {
      // Rows longer than kBlocks blocks refill the tables per group and slice (a few % of the
      // work); shorter ones fill them once per call.
      if (terms[0].b0 != b0)
        for (int i = 0; i < NA; ++i) terms[i].template Fill<Fmt>(act[i], b0, std::min(nb, b0 + ActivationTerms::kBlocks));
      DotColumns<Fmt, NA>(group, act, terms, acc);
    }
    for (int i = 0; i < NA; ++i) StorePackedGroup(acc[i], g, row_begin, row_end, y[i]);
  }
  (void)prefetch_row_end;
}

// One packed Q4_0 / Q5_0 group of nb records into panel records (kernels_panels.cc's layout,
// PanelQ4_0 / PanelQ5_0): the scales copied, register K's stored integers as WeightsOf unpacks
// them, so the panel kernel's operands are the packed kernel's, byte for byte.
template <class Fmt>
void UnpackGroupToPanel(const uint8_t* group, int64_t nb, uint8_t* dst) {
  using L = PackedLayout<Fmt>;
  using Panel = PackedLayout<PackedQ8_0>;
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* rec = group + b * L::kColumnBytes;
    uint8_t* out = dst + b * Panel::kColumnBytes;
    std::memcpy(out + Panel::kScalesAt, rec + L::kScalesAt, 16);
    __m256i planes[5];
    if constexpr (Fmt::kFivePlanes)
      for (int j = 0; j < 5; ++j) planes[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rec + L::kPlanesAt + 32 * j));
    auto* bytes = reinterpret_cast<__m256i*>(out + Panel::kBytesAt);
    const auto store = [&](auto k) {
      constexpr int K = decltype(k)::value;
      _mm256_storeu_si256(bytes + K, WeightsOf<Fmt, K>(rec, planes).u);
    };
    store(std::integral_constant<int, 0>{});
    store(std::integral_constant<int, 1>{});
    store(std::integral_constant<int, 2>{});
    store(std::integral_constant<int, 3>{});
    store(std::integral_constant<int, 4>{});
    store(std::integral_constant<int, 5>{});
    store(std::integral_constant<int, 6>{});
    store(std::integral_constant<int, 7>{});
  }
}

// mat_vec and mat_mat (ForEachMatMulTile): each activation row gets the operations it gets
// alone, so mat_mat equals n_act mat_vec calls bit for bit.
// Activation rows per pass over a packed record: the widest tile that fits the vector registers.
constexpr int kBlock32ActTile = kWideTargets ? 8 : 4;

template <class Fmt>
void MatMulPackedBlock32(const MatMulArgs& args) {
  ForEachMatMulTile<kBlock32ActTile>(args, [](const MatMulArgs& a, int64_t a0, auto na) {
    constexpr int NA = decltype(na)::value;
    const block_q8_0* act[NA];
    float* y[NA];
    for (int i = 0; i < NA; ++i) {
      act[i] = reinterpret_cast<const block_q8_0*>(static_cast<const char*>(a.act) + (a0 + i) * a.act_row_bytes);
      y[i] = a.y + (a0 + i) * a.y_stride;
    }
    MulPacked<Fmt, NA>(a.w, a.w_row_bytes, a.n, a.row_begin, a.row_end, a.prefetch_row_end, act, y);
  });
}

#endif  // GGUFLOW_X86_256

// Calls f(Fmt{}) with the packed format of w_type; false for a type without one.
template <class F>
bool WithPackedFormat(uint32_t w_type, F&& f) {
  switch (w_type) {
    case GGML_TYPE_Q4_0: f(PackedQ4_0{}); return true;
    case GGML_TYPE_Q5_0: f(PackedQ5_0{}); return true;
    case GGML_TYPE_Q8_0: f(PackedQ8_0{}); return true;
    default: return false;
  }
}

// The k-quant packed layouts, each in its own source.
struct KQuantPacked {
  void (*pack)(const void* src, size_t w_row_bytes, int64_t n, int64_t n_rows, void* dst);
  void (*dequantize_row)(const void* w, size_t w_row_bytes, int64_t n, int64_t row, float* dst);
  void (*mat_mul)(const MatMulArgs& args);
};
const KQuantPacked* KQuantPackedOf(uint32_t w_type) {
  static constexpr KQuantPacked kQ4K{PackQ4K, DequantizePackedRowQ4K, MatMulPackedQ4K};
  static constexpr KQuantPacked kQ6K{PackQ6K, DequantizePackedRowQ6K, MatMulPackedQ6K};
  switch (w_type) {
    case GGML_TYPE_Q4_K: return &kQ4K;
    case GGML_TYPE_Q6_K: return &kQ6K;
    default: return nullptr;
  }
}

}  // namespace

uint32_t PackedGroupRows(uint32_t w_type) {
#if GGUFLOW_X86_256
  return KQuantPackedOf(w_type) || WithPackedFormat(w_type, [](auto) {}) ? kGroupRows : 0;
#else
  (void)w_type;
  return 0;
#endif
}

void PackWeights(uint32_t w_type, const void* src, size_t w_row_bytes, int64_t n, int64_t n_rows,
                 void* dst) {
  if (const KQuantPacked* k = KQuantPackedOf(w_type)) return k->pack(src, w_row_bytes, n, n_rows, dst);
  WithPackedFormat(w_type, [&](auto fmt) {
    PackMatrix<decltype(fmt)>(src, w_row_bytes, n, n_rows, dst);
  });
}

void DequantizePackedRow(uint32_t w_type, const void* w, size_t w_row_bytes, int64_t n,
                         int64_t row, float* dst) {
  if (const KQuantPacked* k = KQuantPackedOf(w_type)) return k->dequantize_row(w, w_row_bytes, n, row, dst);
  WithPackedFormat(w_type, [&](auto fmt) {
    DequantizePackedRowOf<decltype(fmt)>(w_type, w, w_row_bytes, n, row, dst);
  });
}

void MatMulPanelBlock32(uint32_t w_type, const MatMulArgs& a) {
#if GGUFLOW_X86_256
  switch (w_type) {
    case GGML_TYPE_Q4_0: return MatMulPackedBlock32<PanelQ4_0>(a);
    case GGML_TYPE_Q5_0: return MatMulPackedBlock32<PanelQ5_0>(a);
    case GGML_TYPE_Q8_0: return MatMulPackedBlock32<PackedQ8_0>(a);
    default: return;
  }
#else
  (void)w_type, (void)a;
#endif
}

void UnpackPackedGroupToPanel(uint32_t w_type, const uint8_t* group, int64_t nb, uint8_t* dst) {
#if GGUFLOW_X86_256
  if (w_type == GGML_TYPE_Q4_0) return UnpackGroupToPanel<PackedQ4_0>(group, nb, dst);
  UnpackGroupToPanel<PackedQ5_0>(group, nb, dst);
#else
  (void)w_type, (void)group, (void)nb, (void)dst;
#endif
}

void MatMulPacked(uint32_t w_type, const MatMulArgs& a) {
#if GGUFLOW_X86_256
  if (const KQuantPacked* k = KQuantPackedOf(w_type)) return k->mat_mul(a);
  // Panels pay for their unpacking when several activation tiles share it (prefill); a step of
  // one tile (a server's decode step of up to 8 sequences) unpacks each record in registers as
  // it multiplies, with the next pair's bytes prefetched while it does.
  if (a.n_act > kBlock32ActTile && MatMulPackedViaPanels(w_type, a)) return;
  WithPackedFormat(w_type, [&](auto fmt) { MatMulPackedBlock32<decltype(fmt)>(a); });
#else
  (void)w_type, (void)a;
#endif
}

}  // namespace gguflow::kernels
