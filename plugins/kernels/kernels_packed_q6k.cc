// Packed (row-interleaved) layout of Q6_K weights and its mat_vec, x86 AVX2 and up: the Q6_K
// counterpart of kernels_packed.cc and kernels_packed_q4k.cc (read those first).
//
// Why: the row-major Q6_K kernel (kernels_kquants.cc) spends ~10 vector instructions per 32
// weights of a row (two loads, two shift-and-masks and an or for the 6-bit integers, the
// chunk's scales spread to 16 lanes with a shuffle and a widening, vpmaddubsw, vpmaddwd, add)
// plus the per-super-block work for one row. With 8 rows interleaved so that each 32-bit lane
// holds 4 elements of one row, the unpacking is the same per register but vpmaddubsw serves 8
// rows, two products add in 16 bits before one vpmaddwd applies the 8 rows' scales, the scales
// of 8 rows are spread with one shuffle and a shift, and the offset and float work is shared.
//
// Layout: groups of 8 consecutive rows; within a group, super-block column b (elements
// 256b .. 256b+255 of all 8 rows) is one record of 8 * 210 = 1680 bytes:
//   d      [8] fp16         the rows' super-block scales, row order                    at 0
//   scales [4][8][4] i8     vector t, lane r = row r's scales 4t .. 4t+3 (per 16 elements) at 16
//   then for half h (0, 1) and quad i (0..7), in this order, 96 bytes at 144 + 768h + 96i:
//     ql   [2][32] u8       pair j: byte 4r+e = ql[64h + 32j + 4i + e] of row r: its low nibble
//                           belongs to element 32(4h+j) + 4i + e, its high nibble to element
//                           32(4h+j+2) + 4i + e
//     qh   [32] u8          byte 4r+e = qh[32h + 4i + e] of row r, whose bits 2k, 2k+1 are the
//                           high bits of element 32(4h+k) + 4i + e
// The kernel reads a record front to back (one stream: with the ql and qh planes apart, the
// two interleaved streams halved the speed from DRAM). Groups follow each other: the packed
// matrix has the row-major size.
//
// Results: per row and super-block the same exact integers as the row-major kernel
// (sum_j sc_j (q . a)_j - 32 sum_j sc_j bsum_j), scaled by float(d) * d_a and accumulated in
// block order in the row's own lane; so the two agree to float rounding.
#include <cstring>
#include <type_traits>

#include "plugins/kernels/kernels_internal.h"

namespace gguflow::kernels {
namespace {

constexpr int kGroupRows = kPackedGroupRows;
constexpr size_t kRecordBytes = kGroupRows * sizeof(block_q6_K);
constexpr size_t kDAt = 0, kScalesAt = 16, kQuadsAt = 144, kQuadBytes = 96;
static_assert(kQuadsAt + 2 * 8 * kQuadBytes == kRecordBytes, "packed record must keep the block bytes");

constexpr size_t LowOffset(int h, int j, int i) { return kQuadsAt + kQuadBytes * (8 * h + i) + 32 * j; }
constexpr size_t HighOffset(int h, int i) { return kQuadsAt + kQuadBytes * (8 * h + i) + 64; }

// Row r of a record back in its row-major block (the inverse of PackQ6K for one block).
block_q6_K UnpackRecordRow(const uint8_t* rec, int r) {
  block_q6_K blk;
  std::memcpy(&blk.d, rec + kDAt + 2 * r, 2);
  for (int t = 0; t < 4; ++t) std::memcpy(blk.scales + 4 * t, rec + kScalesAt + 32 * t + 4 * r, 4);
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 8; ++i) {
      for (int j = 0; j < 2; ++j) std::memcpy(blk.ql + 64 * h + 32 * j + 4 * i, rec + LowOffset(h, j, i) + 4 * r, 4);
      std::memcpy(blk.qh + 32 * h + 4 * i, rec + HighOffset(h, i) + 4 * r, 4);
    }
  return blk;
}

#if GGUFLOW_X86_256

inline __m256i Load(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// Signed bytes Lo and Hi of every 32-bit lane of v, sign-extended into the lane's two 16-bit
// halves (vpshufb puts each in the high byte of its half, the arithmetic shift brings it down).
template <int Lo, int Hi>
inline __m256i LaneSignedBytePair(__m256i v) {
  constexpr char z = static_cast<char>(0x80);  // vpshufb: zero this byte
  const __m256i control = _mm256_setr_epi8(z, Lo, z, Hi, z, 4 + Lo, z, 4 + Hi, z, 8 + Lo, z, 8 + Hi, z,
                                           12 + Lo, z, 12 + Hi, z, Lo, z, Hi, z, 4 + Lo, z, 4 + Hi, z,
                                           8 + Lo, z, 8 + Hi, z, 12 + Lo, z, 12 + Hi);
  return _mm256_srai_epi16(_mm256_shuffle_epi8(v, control), 8);
}

// The 8 rows' scale of 16-element group G, in both 16-bit halves of each row's lane.
template <int G>
inline __m256i GroupScales(const uint8_t* rec) {
  return LaneSignedBytePair<G % 4, G % 4>(Load(rec + kScalesAt + 32 * (G / 4)));
}

// Bits 2K, 2K+1 of each byte of qh moved to bits 4, 5 (16-bit shifts: bits that cross into the
// neighbouring byte land outside bits 4-5 of it), the rest cleared.
template <int K>
inline __m256i HighBits(__m256i qh) {
  __m256i v = qh;
  if constexpr (K < 2) v = _mm256_slli_epi16(qh, 4 - 2 * K);
  if constexpr (K > 2) v = _mm256_srli_epi16(qh, 2 * K - 4);
  return _mm256_and_si256(v, _mm256_set1_epi8(0x30));
}

// p with its value hidden from the optimizer, so that loads through it read memory. Two uses:
// - chunks C and C+2 read the same ql bytes and all four chunks the same qh bytes; left alone,
//   GCC keeps a half's 24 loaded vectors across its chunks and spills them (and the sums) to
//   the stack, a store and a reload where a second load from L1 costs nothing;
// - the minus32_bsums table just stored: GCC would keep the stored vectors in registers and
//   extract each element (vpextrd and stack round trips) where one broadcast from L1 does.
template <class T>
inline T* Opaque(T* p) {
  asm("" : "+r"(p));
  return p;
}

#if GGUFLOW_X86_VNNI
// VNNI prefill: each 16-element group's integer sum starts at -32 * bsum_j (the stored integers
// are value + 32), so the group dot comes out offset-free and the super-block needs no separate
// sum_j sc_j * bsum_j per activation row (OffsetTerms: 8 vpmaddwd and their shuffles per
// activation row and record, ~10 % of the vpdpbusd work). The same exact integers as
// isum - 32 * offset, so the same bits. minus32_bsums[k][j] for activation row k, group j.
template <int NA>
inline void MinusOffsetBsums(const block_q8_K* const* a, int32_t (*minus32_bsums)[16]) {
  for (int k = 0; k < NA; ++k) {
    const __m256i bsums = Load(reinterpret_cast<const uint8_t*>(a[k]->bsums));  // 16 x int16
    const __m256i lo = _mm256_slli_epi32(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(bsums)), 5);
    const __m256i hi = _mm256_slli_epi32(_mm256_cvtepi16_epi32(_mm256_extracti128_si256(bsums, 1)), 5);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(minus32_bsums[k]), _mm256_sub_epi32(_mm256_setzero_si256(), lo));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(minus32_bsums[k] + 8), _mm256_sub_epi32(_mm256_setzero_si256(), hi));
  }
}
#endif

// isum[k] += sum over the four chunks 4H+C of half H of scale_j * (q . a_k)_j for their
// 16-element groups j (quads 0-3 and 4-7 of the chunk), for NA activation rows; on the VNNI
// prefill path (NA > 1) scale_j * ((q . a_k)_j - 32 * bsum_j), the offset taken off in the group
// (minus32_bsums, MinusOffsetBsums). Products are at most 2 * 63 * 128 = 16128 per 16-bit lane,
// so two quads add up in 16 bits (32256 < 2^15) before vpmaddwd applies the group's scales.
template <int H, int NA>
inline void HalfStep(const uint8_t* rec, const block_q8_K* const* a, const int32_t (*minus32_bsums)[16],
                     __m256i* isum) {
  const __m256i nibbles = _mm256_set1_epi8(0x0F);
#if GGUFLOW_X86_VNNI
  // VNNI prefill: each group's sum starts at -32 * bsum_j (one broadcast), vpdpbusd adds its
  // four quads in 32 bits, then one vpmulld applies the rows' group scales (sign-extended
  // bytes): 7 instructions per group and activation row where the 16-bit pairs took ~10. The
  // same exact integers (|group sum| <= 16 * 32 * 128 once the quads are in, and at most
  // 65536 + 16 * 63 * 128 before; times a scale of at most 128, sixteen groups: far below
  // 2^31), so the same bits.
  const auto chunk_vnni = [&](auto c) {
    constexpr int C = decltype(c)::value;
    rec = Opaque(rec);
#pragma GCC unroll 2
    for (int g = 0; g < 2; ++g) {
      const __m256i scale_bytes = Load(rec + kScalesAt + 32 * ((2 * (4 * H + C) + g) / 4));
      const int byte = (2 * (4 * H + C) + g) % 4;  // the group's scale byte in each row's lane
      const __m256i scales = _mm256_srai_epi32(_mm256_slli_epi32(scale_bytes, 24 - 8 * byte), 24);
      __m256i d[NA];
      for (int k = 0; k < NA; ++k) d[k] = _mm256_set1_epi32(minus32_bsums[k][2 * (4 * H + C) + g]);
#pragma GCC unroll 4
      for (int i = 4 * g; i < 4 * g + 4; ++i) {
        const __m256i v = Load(rec + LowOffset(H, C % 2, i));
        const __m256i nibble = _mm256_and_si256(C < 2 ? v : _mm256_srli_epi16(v, 4), nibbles);
        const __m256i u = _mm256_or_si256(nibble, HighBits<C>(Load(rec + HighOffset(H, i))));
#pragma GCC unroll 8
        for (int k = 0; k < NA; ++k)
          d[k] = _mm256_dpbusd_epi32(d[k], u, ActivationQuad(a[k]->qs + 32 * (4 * H + C) + 4 * i));
      }
#pragma GCC unroll 8
      for (int k = 0; k < NA; ++k) isum[k] = _mm256_add_epi32(isum[k], _mm256_mullo_epi32(d[k], scales));
    }
  };
#endif
  // Chunk 4H+C alone, quads in pairs added in 16 bits (prefill: NA 16-bit sums live at once).
  const auto chunk = [&](auto c) {
    constexpr int C = decltype(c)::value;
#pragma GCC unroll 2
    for (int g = 0; g < 2; ++g) {
      const __m256i scales = g == 0 ? GroupScales<2 * (4 * H + C)>(rec) : GroupScales<2 * (4 * H + C) + 1>(rec);
#pragma GCC unroll 2
      for (int pair = 0; pair < 2; ++pair) {
        __m256i p[NA];
        for (int k = 0; k < NA; ++k) p[k] = _mm256_setzero_si256();
#pragma GCC unroll 2
        for (int i = 4 * g + 2 * pair; i < 4 * g + 2 * pair + 2; ++i) {
          const __m256i v = Load(rec + LowOffset(H, C % 2, i));
          const __m256i nibble = _mm256_and_si256(C < 2 ? v : _mm256_srli_epi16(v, 4), nibbles);
          const __m256i u = _mm256_or_si256(nibble, HighBits<C>(Load(rec + HighOffset(H, i))));
#pragma GCC unroll 4
          for (int k = 0; k < NA; ++k)
            p[k] = _mm256_add_epi16(p[k], _mm256_maddubs_epi16(u, ActivationQuad(a[k]->qs + 32 * (4 * H + C) + 4 * i)));
        }
#pragma GCC unroll 4
        for (int k = 0; k < NA; ++k) isum[k] = _mm256_add_epi32(isum[k], _mm256_madd_epi16(p[k], scales));
      }
    }
  };
  // Quads I and I+1 of all four chunks at once, group half G: reads the half front to back
  // once, the fast order from DRAM (decode); the 4 x NA 16-bit sums only fit registers for
  // NA = 1.
  const auto quad_pair = [&](auto first, auto group_half) {
    constexpr int I = decltype(first)::value, G = decltype(group_half)::value;
    __m256i p0 = _mm256_setzero_si256(), p1 = p0, p2 = p0, p3 = p0;
#pragma GCC unroll 2
    for (int i = I; i < I + 2; ++i) {
      const __m256i v0 = Load(rec + LowOffset(H, 0, i)), v1 = Load(rec + LowOffset(H, 1, i));
      const __m256i qh = Load(rec + HighOffset(H, i));
      const auto product = [&](__m256i nibble, __m256i high_bits, int c) {
        const __m256i u = _mm256_or_si256(_mm256_and_si256(nibble, nibbles), high_bits);
        return _mm256_maddubs_epi16(u, ActivationQuad(a[0]->qs + 32 * (4 * H + c) + 4 * i));
      };
      p0 = _mm256_add_epi16(p0, product(v0, HighBits<0>(qh), 0));
      p1 = _mm256_add_epi16(p1, product(v1, HighBits<1>(qh), 1));
      p2 = _mm256_add_epi16(p2, product(_mm256_srli_epi16(v0, 4), HighBits<2>(qh), 2));
      p3 = _mm256_add_epi16(p3, product(_mm256_srli_epi16(v1, 4), HighBits<3>(qh), 3));
    }
    isum[0] = _mm256_add_epi32(isum[0], _mm256_madd_epi16(p0, GroupScales<2 * (4 * H + 0) + G>(rec)));
    isum[0] = _mm256_add_epi32(isum[0], _mm256_madd_epi16(p1, GroupScales<2 * (4 * H + 1) + G>(rec)));
    isum[0] = _mm256_add_epi32(isum[0], _mm256_madd_epi16(p2, GroupScales<2 * (4 * H + 2) + G>(rec)));
    isum[0] = _mm256_add_epi32(isum[0], _mm256_madd_epi16(p3, GroupScales<2 * (4 * H + 3) + G>(rec)));
  };
  (void)minus32_bsums;  // read by chunk_vnni only
  if constexpr (NA == 1) {
    quad_pair(std::integral_constant<int, 0>{}, std::integral_constant<int, 0>{});
    quad_pair(std::integral_constant<int, 2>{}, std::integral_constant<int, 0>{});
    quad_pair(std::integral_constant<int, 4>{}, std::integral_constant<int, 1>{});
    quad_pair(std::integral_constant<int, 6>{}, std::integral_constant<int, 1>{});
  } else {
#if GGUFLOW_X86_VNNI
    (void)chunk;
    chunk_vnni(std::integral_constant<int, 0>{});
    chunk_vnni(std::integral_constant<int, 1>{});
    chunk_vnni(std::integral_constant<int, 2>{});
    chunk_vnni(std::integral_constant<int, 3>{});
#else
    chunk(std::integral_constant<int, 0>{});
    chunk(std::integral_constant<int, 1>{});
    chunk(std::integral_constant<int, 2>{});
    chunk(std::integral_constant<int, 3>{});
#endif
  }
}

// sum_j sc_j * bsum_j for groups 4T .. 4T+3 (bsums: sums of 16 activation integers).
template <int T>
inline __m256i OffsetTerms(const uint8_t* rec, const block_q8_K& a) {
  const __m256i scales = Load(rec + kScalesAt + 32 * T);
  int32_t pair01, pair23;  // two adjacent int16 bsums as one lane
  std::memcpy(&pair01, a.bsums + 4 * T, 4);
  std::memcpy(&pair23, a.bsums + 4 * T + 2, 4);
  return _mm256_add_epi32(_mm256_madd_epi16(LaneSignedBytePair<0, 1>(scales), _mm256_set1_epi32(pair01)),
                          _mm256_madd_epi16(LaneSignedBytePair<2, 3>(scales), _mm256_set1_epi32(pair23)));
}

// acc[k] lane r += float(d_r) * d_k * (row r's exact super-block dot with activation row k), for
// NA activation rows (prefill runs NA = 4 so the unpacking is shared; each activation row gets
// exactly the operations it gets alone).
template <int NA>
inline void RecordStep(const uint8_t* rec, const block_q8_K* const* a, __m256* acc) {
  // VNNI prefill: the groups' sums start at -32 * bsum (MinusOffsetBsums), so isum is the dot.
  constexpr bool kOffsetInGroups = GGUFLOW_X86_VNNI && NA > 1;
  int32_t minus32_bsums[NA][16];
#if GGUFLOW_X86_VNNI
  if constexpr (kOffsetInGroups) MinusOffsetBsums<NA>(a, minus32_bsums);
#endif
  __m256i isum[NA];
  for (int k = 0; k < NA; ++k) isum[k] = _mm256_setzero_si256();
  HalfStep<0, NA>(rec, a, Opaque(minus32_bsums), isum);
  HalfStep<1, NA>(rec, a, Opaque(minus32_bsums), isum);
  const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rec + kDAt)));
  for (int k = 0; k < NA; ++k) {
    __m256i dot = isum[k];
    if constexpr (!kOffsetInGroups) {
      __m256i offset = _mm256_add_epi32(OffsetTerms<0>(rec, *a[k]), OffsetTerms<1>(rec, *a[k]));
      offset = _mm256_add_epi32(offset, _mm256_add_epi32(OffsetTerms<2>(rec, *a[k]), OffsetTerms<3>(rec, *a[k])));
      dot = _mm256_sub_epi32(dot, _mm256_slli_epi32(offset, 5));  // stored q = value + 32
    }
    acc[k] = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(a[k]->d)), _mm256_cvtepi32_ps(dot), acc[k]);
  }
}

#if GGUFLOW_X86_VNNI
// ahead.step() calls per record pair (HalfStepPair: one per 16-element group: 2 halves x 4
// chunks x 2 groups), so each prefetches about a sixteenth of the two records that the next
// pair reads at the same step: a few lines at a time between the products. One step of both
// records (52 lines) per record pair stalled the loads behind the prefetches: the 8-row 896 x
// 4864 product from DRAM took 365 us at 1 thread and 211 us at 2 (kernels_bench
// prefill8_packed), against 259 and 157 us spread like this.
constexpr size_t kPrefetchStepsPerRecordPair = 16;
static_assert(kPrefetchStepsPerRecordPair == 2 * 4 * 2, "HalfStepPair steps once per 16-element group");

// Two records side by side in 512-bit vectors (prefill): lanes 0-7 are rec0's rows, lanes 8-15
// rec1's, so each activation quad is broadcast once for 16 rows and one vpdpbusd does the work
// of two. Every lane gets exactly RecordStep's (VNNI) integer and float operations, so a row's
// bits do not depend on whether its group went alone or in a pair.
inline __m512i LoadPair(const uint8_t* rec0, const uint8_t* rec1, size_t at) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(Load(rec0 + at)), Load(rec1 + at), 1);
}

template <int K>
inline __m512i HighBits512(__m512i qh) {
  __m512i v = qh;
  if constexpr (K < 2) v = _mm512_slli_epi16(qh, 4 - 2 * K);
  if constexpr (K > 2) v = _mm512_srli_epi16(qh, 2 * K - 4);
  return _mm512_and_si512(v, _mm512_set1_epi8(0x30));
}

// The prefetch of the following pair advances once per 16-element group, 16 times a record pair
// (see kPrefetchStepsPerRecordPair).
template <int H, int NA>
inline void HalfStepPair(const uint8_t* rec0, const uint8_t* rec1, const block_q8_K* const* a,
                         const int32_t (*minus32_bsums)[16], __m512i* isum, AheadPrefetch& ahead) {
  const __m512i nibbles = _mm512_set1_epi8(0x0F);
  const auto chunk = [&](auto c) {
    constexpr int C = decltype(c)::value;
    rec0 = Opaque(rec0);
    rec1 = Opaque(rec1);
#pragma GCC unroll 2
    for (int g = 0; g < 2; ++g) {
      ahead.step();
      const __m512i scale_bytes = LoadPair(rec0, rec1, kScalesAt + 32 * ((2 * (4 * H + C) + g) / 4));
      const int byte = (2 * (4 * H + C) + g) % 4;
      const __m512i scales = _mm512_srai_epi32(_mm512_slli_epi32(scale_bytes, 24 - 8 * byte), 24);
      __m512i d[NA];
      for (int k = 0; k < NA; ++k) d[k] = _mm512_set1_epi32(minus32_bsums[k][2 * (4 * H + C) + g]);
#pragma GCC unroll 4
      for (int i = 4 * g; i < 4 * g + 4; ++i) {
        const __m512i v = LoadPair(rec0, rec1, LowOffset(H, C % 2, i));
        const __m512i nibble = _mm512_and_si512(C < 2 ? v : _mm512_srli_epi16(v, 4), nibbles);
        const __m512i u = _mm512_or_si512(nibble, HighBits512<C>(LoadPair(rec0, rec1, HighOffset(H, i))));
#pragma GCC unroll 8
        for (int k = 0; k < NA; ++k) {
          int32_t quad;
          std::memcpy(&quad, a[k]->qs + 32 * (4 * H + C) + 4 * i, 4);
          d[k] = _mm512_dpbusd_epi32(d[k], u, _mm512_set1_epi32(quad));
        }
      }
#pragma GCC unroll 8
      for (int k = 0; k < NA; ++k) isum[k] = _mm512_add_epi32(isum[k], _mm512_mullo_epi32(d[k], scales));
    }
  };
  chunk(std::integral_constant<int, 0>{});
  chunk(std::integral_constant<int, 1>{});
  chunk(std::integral_constant<int, 2>{});
  chunk(std::integral_constant<int, 3>{});
}

template <int NA>
inline void RecordStepPair(const uint8_t* rec0, const uint8_t* rec1, const block_q8_K* const* a, __m512* acc,
                           AheadPrefetch& ahead) {
  int32_t minus32_bsums[NA][16];
  MinusOffsetBsums<NA>(a, minus32_bsums);
  __m512i isum[NA];
  for (int k = 0; k < NA; ++k) isum[k] = _mm512_setzero_si512();
  HalfStepPair<0, NA>(rec0, rec1, a, Opaque(minus32_bsums), isum, ahead);
  HalfStepPair<1, NA>(rec0, rec1, a, Opaque(minus32_bsums), isum, ahead);
  const __m256i halves = _mm256_inserti128_si256(
      _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rec0 + kDAt))),
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(rec1 + kDAt)), 1);
  const __m512 d = _mm512_cvtph_ps(halves);
  for (int k = 0; k < NA; ++k)
    acc[k] = _mm512_fmadd_ps(_mm512_mul_ps(d, _mm512_set1_ps(a[k]->d)), _mm512_cvtepi32_ps(isum[k]), acc[k]);
}
#endif

// Activation rows a0 .. a0+NA-1 against every group of the range.
template <int NA>
void MatMulTile(const MatMulArgs& args, int64_t a0) {
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
    __m512 acc[NA];
    for (int k = 0; k < NA; ++k) acc[k] = _mm512_setzero_ps();
    for (int64_t b = 0; b < args.n / 256; ++b) {
      const block_q8_K* blocks[NA];
      for (int k = 0; k < NA; ++k) blocks[k] = rows[k] + b;
      RecordStepPair<NA>(group0 + b * kRecordBytes, group1 + b * kRecordBytes, blocks, acc, ahead);
    }
    for (int k = 0; k < NA; ++k) {
      float* out = args.y + (a0 + k) * args.y_stride;
      StorePackedGroup(_mm512_castps512_ps256(acc[k]), g, args.row_begin, args.row_end, out);
      StorePackedGroup(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[k]), 1)), g + 1, args.row_begin,
                       args.row_end, out);
    }
  }
#endif
  for (; g * kGroupRows < args.row_end; ++g) {
    const uint8_t* group = PackedGroupAt(args.w, args.w_row_bytes, g);
    __m256 acc[NA];
    for (int k = 0; k < NA; ++k) acc[k] = _mm256_setzero_ps();
    for (int64_t b = 0; b < args.n / 256; ++b) {
      const block_q8_K* blocks[NA];
      for (int k = 0; k < NA; ++k) blocks[k] = rows[k] + b;
      RecordStep<NA>(group + b * kRecordBytes, blocks, acc);
    }
    for (int k = 0; k < NA; ++k)
      StorePackedGroup(acc[k], g, args.row_begin, args.row_end, args.y + (a0 + k) * args.y_stride);
  }
}

#endif  // GGUFLOW_X86_256

}  // namespace

void PackQ6K(const void* src, size_t w_row_bytes, int64_t n, int64_t n_rows, void* dst) {
  for (int64_t g = 0; g * kGroupRows < n_rows; ++g) {
    const uint8_t* rows = PackedGroupAt(src, w_row_bytes, g);
    uint8_t* group = const_cast<uint8_t*>(PackedGroupAt(dst, w_row_bytes, g));
    for (int64_t b = 0; b < n / 256; ++b) {
      uint8_t* rec = group + b * kRecordBytes;
      for (int r = 0; r < kGroupRows; ++r) {
        const auto& blk = reinterpret_cast<const block_q6_K*>(rows + r * w_row_bytes)[b];
        std::memcpy(rec + kDAt + 2 * r, &blk.d, 2);
        for (int t = 0; t < 4; ++t) std::memcpy(rec + kScalesAt + 32 * t + 4 * r, blk.scales + 4 * t, 4);
        for (int h = 0; h < 2; ++h)
          for (int i = 0; i < 8; ++i) {
            for (int j = 0; j < 2; ++j)
              std::memcpy(rec + LowOffset(h, j, i) + 4 * r, blk.ql + 64 * h + 32 * j + 4 * i, 4);
            std::memcpy(rec + HighOffset(h, i) + 4 * r, blk.qh + 32 * h + 4 * i, 4);
          }
      }
    }
  }
}

void DequantizePackedRowQ6K(const void* w, size_t w_row_bytes, int64_t n, int64_t row, float* dst) {
  DequantizePackedSuperBlocks<block_q6_K>(GGML_TYPE_Q6_K, w, w_row_bytes, n, row, dst, UnpackRecordRow);
}

void MatMulPackedQ6K(const MatMulArgs& args) {
#if GGUFLOW_X86_256
  // VNNI: 8 activation rows per pass (the 32-bit group sums need no 16-bit pairs in flight).
  ForEachMatMulTile<GGUFLOW_X86_VNNI ? 8 : 4>(args, [](const MatMulArgs& rows, int64_t a0, auto na) { MatMulTile<decltype(na)::value>(rows, a0); });
#else
  (void)args;
#endif
}

}  // namespace gguflow::kernels
