// Packed (row-interleaved) layout of Q4_K weights and its mat_vec, x86 AVX2 and up: the Q4_K
// counterpart of kernels_packed.cc (read that first; the idea is the same).
//
// Why: the row-major Q4_K kernel (kernels_kquants.cc) spends ~11 vector instructions per 32
// weights of a row (nibble split, the chunk's scale spread to 16 lanes with a shuffle and a
// widening, vpmaddubsw, vpmaddwd, add, plus the per-super-block scale unpacking, min term and
// float work for one row) and decode is compute-bound at ~21 GB/s a core. With 8 rows
// interleaved so that each 32-bit lane holds 4 elements of one row, one vpmaddubsw serves 8
// rows, the 8 products of a 32-element chunk add up in 16 bits, one vpmaddwd applies the 8
// rows' chunk scales, and the 6-bit scales of 8 rows unpack with the same word masks as one
// row's: ~4 instructions per 32 weights of a row.
//
// Layout: groups of kGroupRows = 8 consecutive rows; within a group, super-block column b
// (elements 256b .. 256b+255 of all 8 rows) is one record of 8 * 144 = 1152 bytes:
//   d      [8] fp16       the rows' super-block scales, row order                     at 0
//   dmin   [8] fp16       the rows' super-block min scales                           at 16
//   scales [3][8] u32     word k (bytes 4k .. 4k+3) of row r's 12 scale bytes at 32 + 32k + 4r
//   qs     [4][8][32] u8  pair p (elements 64p .. 64p+63), quad i: byte 4r+e = qs[32p + 4i + e]
//                         of row r, whose low nibble is element 64p + 4i + e and high nibble
//                         element 64p + 32 + 4i + e                           at 128 + 256p + 32i
// Groups follow each other: the packed matrix has the row-major size.
//
// Results: per row and super-block the same exact integers as the row-major kernel
// (sum_c scale_c * (q . a)_c and sum_c min_c * bsum_c), scaled by float(d) * d_a and
// float(dmin) * d_a and accumulated in block order in the row's own lane; the row-major kernel
// accumulates 8 partial lanes instead, so the two agree to float rounding.
#include <algorithm>
#include <cstring>

#include "plugins/kernels/kernels_internal.h"

namespace gguflow::kernels {
namespace {

constexpr int kGroupRows = kPackedGroupRows;
constexpr size_t kRecordBytes = kGroupRows * sizeof(block_q4_K);
constexpr size_t kDAt = 0, kDminAt = 16, kScalesAt = 32, kQsAt = 128;
static_assert(kQsAt + 4 * 8 * 32 == kRecordBytes, "packed record must keep the block bytes");

const block_q4_K& RowBlock(const void* rows, size_t w_row_bytes, int r, int64_t b) {
  return reinterpret_cast<const block_q4_K*>(static_cast<const char*>(rows) + r * w_row_bytes)[b];
}

// Row r of a record back in its row-major block (the inverse of PackQ4K for one block).
block_q4_K UnpackRecordRow(const uint8_t* rec, int r) {
  block_q4_K blk;
  std::memcpy(&blk.d, rec + kDAt + 2 * r, 2);
  std::memcpy(&blk.dmin, rec + kDminAt + 2 * r, 2);
  for (int k = 0; k < 3; ++k) std::memcpy(blk.scales + 4 * k, rec + kScalesAt + 32 * k + 4 * r, 4);
  for (int p = 0; p < 4; ++p)
    for (int i = 0; i < 8; ++i) std::memcpy(blk.qs + 32 * p + 4 * i, rec + kQsAt + 256 * p + 32 * i + 4 * r, 4);
  return blk;
}

#if GGUFLOW_X86_256

// Bytes Lo and Hi of every 32-bit lane of v, zero-extended into the lane's two 16-bit halves.
template <int Lo, int Hi>
inline __m256i LaneBytePair(__m256i v) {
  constexpr char z = static_cast<char>(0x80);  // vpshufb: zero this byte
  const __m256i control = _mm256_setr_epi8(Lo, z, Hi, z, 4 + Lo, z, 4 + Hi, z, 8 + Lo, z, 8 + Hi, z,
                                           12 + Lo, z, 12 + Hi, z, Lo, z, Hi, z, 4 + Lo, z, 4 + Hi, z,
                                           8 + Lo, z, 8 + Hi, z, 12 + Lo, z, 12 + Hi, z);
  return _mm256_shuffle_epi8(v, control);
}

// One record against NA activation rows' super-blocks a[0..NA): acc[k] lane r +=
// float(d_r) * d_k * (sum_c scale_rc (q . a_k)_c), acc_min[k] lane r += float(dmin_r) * d_k *
// (sum_c min_rc bsum_kc). Prefill runs NA = 4 so the unpacking is shared; each activation row
// gets exactly the operations it gets alone (NA = 1).
template <int NA>
inline void RecordStep(const uint8_t* rec, const block_q8_K* const* a, __m256* acc, __m256* acc_min) {
  // GGML's unpacking of the 12 scale bytes (kernels_kquants.cc ScaleMinK4Words), 8 rows at once
  // with the same 32-bit word masks: lane r of sc_lo/sc_hi = scales of chunks 0-3 / 4-7, of
  // min_lo/min_hi = mins of chunks 0-3 / 4-7, a byte each.
  const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rec + kScalesAt));
  const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rec + kScalesAt + 32));
  const __m256i w2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rec + kScalesAt + 64));
  const __m256i mask6 = _mm256_set1_epi32(0x3f3f3f3f), mask4 = _mm256_set1_epi32(0x0f0f0f0f),
                mask2 = _mm256_set1_epi32(0x03030303);
  const __m256i sc_lo = _mm256_and_si256(w0, mask6);
  const __m256i sc_hi = _mm256_or_si256(_mm256_and_si256(w2, mask4),
                                        _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(w0, 6), mask2), 4));
  const __m256i min_lo = _mm256_and_si256(w1, mask6);
  const __m256i min_hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(w2, 4), mask4),
                                         _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(w1, 6), mask2), 4));

  // Products of a 32-element chunk: each vpmaddubsw lane is at most 2 * 15 * 128 = 3840, so the
  // chunk's 8 quads add up in 16 bits (30720 < 2^15); vpmaddwd then applies the chunk scales.
  const __m256i nibbles = _mm256_set1_epi8(0x0F);
  __m256i isum[NA];
  for (int k = 0; k < NA; ++k) isum[k] = _mm256_setzero_si256();
#if GGUFLOW_X86_VNNI
  // VNNI: vpdpbusd adds each chunk's products in 32 bits (one instruction where vpmaddubsw
  // and a 16-bit add were two), then one vpmulld per chunk applies the rows' scales (lane r:
  // byte `c` of the scale word zero-extended). The same exact integers: |chunk dot| <= 32 * 15 *
  // 128, times a 6-bit scale, eight chunks, stays far below 2^31.
  const auto pair = [&](int p, __m256i low_scales, __m256i high_scales) {
    __m256i low[NA], high[NA];
    for (int k = 0; k < NA; ++k) low[k] = high[k] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rec + kQsAt + 256 * p + 32 * i));
      const __m256i u_low = _mm256_and_si256(v, nibbles);
      const __m256i u_high = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibbles);
#pragma GCC unroll 8
      for (int k = 0; k < NA; ++k) {
        low[k] = _mm256_dpbusd_epi32(low[k], u_low, ActivationQuad(a[k]->qs + 64 * p + 4 * i));
        high[k] = _mm256_dpbusd_epi32(high[k], u_high, ActivationQuad(a[k]->qs + 64 * p + 32 + 4 * i));
      }
    }
#pragma GCC unroll 8
    for (int k = 0; k < NA; ++k)
      isum[k] = _mm256_add_epi32(isum[k], _mm256_add_epi32(_mm256_mullo_epi32(low[k], low_scales),
                                                           _mm256_mullo_epi32(high[k], high_scales)));
  };
  const auto byte = [](__m256i words, int c) {  // byte c of every 32-bit lane, zero-extended
    return _mm256_and_si256(_mm256_srli_epi32(words, 8 * c), _mm256_set1_epi32(0xFF));
  };
  pair(0, byte(sc_lo, 0), byte(sc_lo, 1));
  pair(1, byte(sc_lo, 2), byte(sc_lo, 3));
  pair(2, byte(sc_hi, 0), byte(sc_hi, 1));
  pair(3, byte(sc_hi, 2), byte(sc_hi, 3));
#else
  const auto pair = [&](int p, __m256i low_scales, __m256i high_scales) {
    __m256i low[NA], high[NA];
    for (int k = 0; k < NA; ++k) low[k] = high[k] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rec + kQsAt + 256 * p + 32 * i));
      const __m256i u_low = _mm256_and_si256(v, nibbles);
      const __m256i u_high = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibbles);
#pragma GCC unroll 4
      for (int k = 0; k < NA; ++k) {
        low[k] = _mm256_add_epi16(low[k], _mm256_maddubs_epi16(u_low, ActivationQuad(a[k]->qs + 64 * p + 4 * i)));
        high[k] = _mm256_add_epi16(high[k], _mm256_maddubs_epi16(u_high, ActivationQuad(a[k]->qs + 64 * p + 32 + 4 * i)));
      }
    }
#pragma GCC unroll 4
    for (int k = 0; k < NA; ++k)
      isum[k] = _mm256_add_epi32(isum[k], _mm256_add_epi32(_mm256_madd_epi16(low[k], low_scales),
                                                           _mm256_madd_epi16(high[k], high_scales)));
  };
  pair(0, LaneBytePair<0, 0>(sc_lo), LaneBytePair<1, 1>(sc_lo));
  pair(1, LaneBytePair<2, 2>(sc_lo), LaneBytePair<3, 3>(sc_lo));
  pair(2, LaneBytePair<0, 0>(sc_hi), LaneBytePair<1, 1>(sc_hi));
  pair(3, LaneBytePair<2, 2>(sc_hi), LaneBytePair<3, 3>(sc_hi));
#endif

  // Min term: bsum_c (sum of chunk c's 32 activation integers, |.| <= 4096) in 16-bit pairs
  // (chunks 2j, 2j+1) against the rows' min pairs.
  const __m256i min_pairs[4] = {LaneBytePair<0, 1>(min_lo), LaneBytePair<2, 3>(min_lo), LaneBytePair<0, 1>(min_hi),
                                LaneBytePair<2, 3>(min_hi)};
  const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rec + kDAt)));
  const __m256 dmin = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rec + kDminAt)));
#pragma GCC unroll 4
  for (int k = 0; k < NA; ++k) {
    const auto bsum_pair = [&](int j) {
      const int32_t even = a[k]->bsums[4 * j] + a[k]->bsums[4 * j + 1];
      const int32_t odd = a[k]->bsums[4 * j + 2] + a[k]->bsums[4 * j + 3];
      return _mm256_set1_epi32(static_cast<int32_t>(static_cast<uint16_t>(even) | static_cast<uint32_t>(odd) << 16));
    };
    __m256i mins = _mm256_madd_epi16(min_pairs[0], bsum_pair(0));
    mins = _mm256_add_epi32(mins, _mm256_madd_epi16(min_pairs[1], bsum_pair(1)));
    mins = _mm256_add_epi32(mins, _mm256_madd_epi16(min_pairs[2], bsum_pair(2)));
    mins = _mm256_add_epi32(mins, _mm256_madd_epi16(min_pairs[3], bsum_pair(3)));
    const __m256 da = _mm256_set1_ps(a[k]->d);
    acc[k] = _mm256_fmadd_ps(_mm256_mul_ps(d, da), _mm256_cvtepi32_ps(isum[k]), acc[k]);
    acc_min[k] = _mm256_fmadd_ps(_mm256_mul_ps(dmin, da), _mm256_cvtepi32_ps(mins), acc_min[k]);
  }
}

#if GGUFLOW_X86_VNNI
// ahead.step() calls per record pair (RecordStepPair: one every kQuadsPerPrefetchStep quads of
// its 4 x 8), each prefetching about an eighth of the next pair's two records, spread between
// the products as in kernels_packed_q6k.cc (8-row 896 x 4864 product from DRAM, kernels_bench
// prefill8_packed: 236 -> 217 us at 1 thread, 145 -> 134 us at 2).
constexpr size_t kPrefetchStepsPerRecordPair = 8;
constexpr int kQuadsPerPrefetchStep = 4 * 8 / kPrefetchStepsPerRecordPair;
static_assert(8 % kQuadsPerPrefetchStep == 0, "the steps fall on quads of each 64-element pair");

inline __m512i LoadPair(const uint8_t* rec0, const uint8_t* rec1, size_t at) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(rec0 + at))),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rec1 + at)), 1);
}

// The 8 fp16 scales at `at` of two records: rec0's rows in lanes 0-7, rec1's in lanes 8-15.
inline __m512 HalvesPair(const uint8_t* rec0, const uint8_t* rec1, size_t at) {
  const __m256i h = _mm256_inserti128_si256(
      _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rec0 + at))),
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(rec1 + at)), 1);
  return _mm512_cvtph_ps(h);
}

// RecordStep (VNNI) for two groups at once in 512-bit vectors, prefill only: lanes 0-7 are
// rec0's rows, lanes 8-15 rec1's, so each activation quad is broadcast once for 16 rows and one
// vpdpbusd does the work of two. Every lane gets exactly RecordStep's integer and float
// operations, so a row's bits do not depend on whether its group went alone or in a pair (as
// kernels_packed.cc's DotColumnsPair for the block-32 formats).
template <int NA>
inline void RecordStepPair(const uint8_t* rec0, const uint8_t* rec1, const block_q8_K* const* a, __m512* acc,
                           __m512* acc_min, AheadPrefetch& ahead) {
  const __m512i w0 = LoadPair(rec0, rec1, kScalesAt), w1 = LoadPair(rec0, rec1, kScalesAt + 32),
                w2 = LoadPair(rec0, rec1, kScalesAt + 64);
  const __m512i mask6 = _mm512_set1_epi32(0x3f3f3f3f), mask4 = _mm512_set1_epi32(0x0f0f0f0f),
                mask2 = _mm512_set1_epi32(0x03030303);
  const __m512i sc_lo = _mm512_and_si512(w0, mask6);
  const __m512i sc_hi = _mm512_or_si512(_mm512_and_si512(w2, mask4),
                                        _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(w0, 6), mask2), 4));
  const __m512i min_lo = _mm512_and_si512(w1, mask6);
  const __m512i min_hi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(w2, 4), mask4),
                                         _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(w1, 6), mask2), 4));
  const __m512i nibbles = _mm512_set1_epi8(0x0F);
  __m512i isum[NA];
  for (int k = 0; k < NA; ++k) isum[k] = _mm512_setzero_si512();
  const auto pair = [&](int p, __m512i low_scales, __m512i high_scales) {
    __m512i low[NA], high[NA];
    for (int k = 0; k < NA; ++k) low[k] = high[k] = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      if (i % kQuadsPerPrefetchStep == 0) ahead.step();
      const __m512i v = LoadPair(rec0, rec1, kQsAt + 256 * p + 32 * i);
      const __m512i u_low = _mm512_and_si512(v, nibbles);
      const __m512i u_high = _mm512_and_si512(_mm512_srli_epi16(v, 4), nibbles);
#pragma GCC unroll 8
      for (int k = 0; k < NA; ++k) {
        int32_t lo, hi;
        std::memcpy(&lo, a[k]->qs + 64 * p + 4 * i, 4);
        std::memcpy(&hi, a[k]->qs + 64 * p + 32 + 4 * i, 4);
        low[k] = _mm512_dpbusd_epi32(low[k], u_low, _mm512_set1_epi32(lo));
        high[k] = _mm512_dpbusd_epi32(high[k], u_high, _mm512_set1_epi32(hi));
      }
    }
#pragma GCC unroll 8
    for (int k = 0; k < NA; ++k)
      isum[k] = _mm512_add_epi32(isum[k], _mm512_add_epi32(_mm512_mullo_epi32(low[k], low_scales),
                                                           _mm512_mullo_epi32(high[k], high_scales)));
  };
  const auto byte = [](__m512i words, int c) {  // byte c of every 32-bit lane, zero-extended
    return _mm512_and_si512(_mm512_srli_epi32(words, 8 * c), _mm512_set1_epi32(0xFF));
  };
  pair(0, byte(sc_lo, 0), byte(sc_lo, 1));
  pair(1, byte(sc_lo, 2), byte(sc_lo, 3));
  pair(2, byte(sc_hi, 0), byte(sc_hi, 1));
  pair(3, byte(sc_hi, 2), byte(sc_hi, 3));

  // LaneBytePair<Lo, Hi> on both halves (the control repeats per 128-bit lane).
  const auto byte_pair = [](__m512i v, int lo, int hi) {
    constexpr char z = static_cast<char>(0x80);
    const __m128i control = _mm_setr_epi8(static_cast<char>(lo), z, static_cast<char>(hi), z, static_cast<char>(4 + lo), z,
                                          static_cast<char>(4 + hi), z, static_cast<char>(8 + lo), z,
                                          static_cast<char>(8 + hi), z, static_cast<char>(12 + lo), z,
                                          static_cast<char>(12 + hi), z);
    return _mm512_shuffle_epi8(v, _mm512_broadcast_i32x4(control));
  };
  const __m512i min_pairs[4] = {byte_pair(min_lo, 0, 1), byte_pair(min_lo, 2, 3), byte_pair(min_hi, 0, 1),
                                byte_pair(min_hi, 2, 3)};
  const __m512 d = HalvesPair(rec0, rec1, kDAt), dmin = HalvesPair(rec0, rec1, kDminAt);
#pragma GCC unroll 4
  for (int k = 0; k < NA; ++k) {
    const auto bsum_pair = [&](int j) {
      const int32_t even = a[k]->bsums[4 * j] + a[k]->bsums[4 * j + 1];
      const int32_t odd = a[k]->bsums[4 * j + 2] + a[k]->bsums[4 * j + 3];
      return _mm512_set1_epi32(static_cast<int32_t>(static_cast<uint16_t>(even) | static_cast<uint32_t>(odd) << 16));
    };
    __m512i mins = _mm512_madd_epi16(min_pairs[0], bsum_pair(0));
    mins = _mm512_add_epi32(mins, _mm512_madd_epi16(min_pairs[1], bsum_pair(1)));
    mins = _mm512_add_epi32(mins, _mm512_madd_epi16(min_pairs[2], bsum_pair(2)));
    mins = _mm512_add_epi32(mins, _mm512_madd_epi16(min_pairs[3], bsum_pair(3)));
    const __m512 da = _mm512_set1_ps(a[k]->d);
    acc[k] = _mm512_fmadd_ps(_mm512_mul_ps(d, da), _mm512_cvtepi32_ps(isum[k]), acc[k]);
    acc_min[k] = _mm512_fmadd_ps(_mm512_mul_ps(dmin, da), _mm512_cvtepi32_ps(mins), acc_min[k]);
  }
}
#endif

// Activation rows a0 .. a0+NA-1 against every group of the range.
template <int NA>
void MatMulTile(const MatMulArgs& args, int64_t a0) {
  const int64_t nb = args.n / 256;
  const block_q8_K* rows[NA];
  for (int k = 0; k < NA; ++k)
    rows[k] = reinterpret_cast<const block_q8_K*>(static_cast<const char*>(args.act) + (a0 + k) * args.act_row_bytes);
  int64_t g = args.row_begin / kGroupRows;
#if GGUFLOW_X86_VNNI
  for (; NA > 1 && (g + 1) * kGroupRows < args.row_end; g += 2) {  // group g + 1 has rows in the range
    const uint8_t* group0 = PackedGroupAt(args.w, args.w_row_bytes, g);
    const uint8_t* group1 = PackedGroupAt(args.w, args.w_row_bytes, g + 1);
    AheadPrefetch ahead = NextPairPrefetch(args.w, args.w_row_bytes, g, args.prefetch_row_end,
                                           2 * kRecordBytes / kPrefetchStepsPerRecordPair);
    __m512 acc[NA], acc_min[NA];
    for (int k = 0; k < NA; ++k) acc[k] = acc_min[k] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      const block_q8_K* blocks[NA];
      for (int k = 0; k < NA; ++k) blocks[k] = rows[k] + b;
      RecordStepPair<NA>(group0 + b * kRecordBytes, group1 + b * kRecordBytes, blocks, acc, acc_min, ahead);
    }
    for (int k = 0; k < NA; ++k) {
      const __m512 y = _mm512_sub_ps(acc[k], acc_min[k]);
      float* out = args.y + (a0 + k) * args.y_stride;
      StorePackedGroup(_mm512_castps512_ps256(y), g, args.row_begin, args.row_end, out);
      StorePackedGroup(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(y), 1)), g + 1, args.row_begin,
                       args.row_end, out);
    }
  }
#endif
  for (; g * kGroupRows < args.row_end; ++g) {
    const uint8_t* group = PackedGroupAt(args.w, args.w_row_bytes, g);
    __m256 acc[NA], acc_min[NA];
    for (int k = 0; k < NA; ++k) acc[k] = acc_min[k] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      const block_q8_K* blocks[NA];
      for (int k = 0; k < NA; ++k) blocks[k] = rows[k] + b;
      RecordStep<NA>(group + b * kRecordBytes, blocks, acc, acc_min);
    }
    for (int k = 0; k < NA; ++k)
      StorePackedGroup(_mm256_sub_ps(acc[k], acc_min[k]), g, args.row_begin, args.row_end,
                       args.y + (a0 + k) * args.y_stride);
  }
}

#endif  // GGUFLOW_X86_256

}  // namespace

void PackQ4K(const void* src, size_t w_row_bytes, int64_t n, int64_t n_rows, void* dst) {
  const int64_t nb = n / 256;
  for (int64_t g = 0; g * kGroupRows < n_rows; ++g) {
    const void* rows = PackedGroupAt(src, w_row_bytes, g);
    uint8_t* group = const_cast<uint8_t*>(PackedGroupAt(dst, w_row_bytes, g));
    for (int64_t b = 0; b < nb; ++b) {
      uint8_t* rec = group + b * kRecordBytes;
      for (int r = 0; r < kGroupRows; ++r) {
        const block_q4_K& blk = RowBlock(rows, w_row_bytes, r, b);
        std::memcpy(rec + kDAt + 2 * r, &blk.d, 2);
        std::memcpy(rec + kDminAt + 2 * r, &blk.dmin, 2);
        for (int k = 0; k < 3; ++k) std::memcpy(rec + kScalesAt + 32 * k + 4 * r, blk.scales + 4 * k, 4);
        for (int p = 0; p < 4; ++p)
          for (int i = 0; i < 8; ++i)
            std::memcpy(rec + kQsAt + 256 * p + 32 * i + 4 * r, blk.qs + 32 * p + 4 * i, 4);
      }
    }
  }
}

void DequantizePackedRowQ4K(const void* w, size_t w_row_bytes, int64_t n, int64_t row, float* dst) {
  DequantizePackedSuperBlocks<block_q4_K>(GGML_TYPE_Q4_K, w, w_row_bytes, n, row, dst, UnpackRecordRow);
}

void MatMulPackedQ4K(const MatMulArgs& args) {
#if GGUFLOW_X86_256
  ForEachMatMulTile<kWideTargets ? 4 : 3>(args, [](const MatMulArgs& rows, int64_t a0, auto na) { MatMulTile<decltype(na)::value>(rows, a0); });
#else
  (void)args;
#endif
}

}  // namespace gguflow::kernels
