// Fused dequantize-and-dot for the k-quants Q2_K, Q3_K, Q4_K, Q5_K, Q6_K against Q8_K
// activations (256-element super-blocks), with all integer work exact inside a super-block:
//
//   every format is seen as unsigned integers q[e] (0..63), a signed scale per 16 elements
//   sc[j], and a per-16 coefficient coef[j] that multiplies the activation's bsums[j]:
//     Q2_K, Q4_K, Q5_K:  dot = d_w d_a sum_j sc_j (q . a)_j  -  dmin_w d_a sum_j coef_j bsum_j
//     Q3_K (offset 4), Q6_K (offset 32), coef = sc:
//                        dot = d_w d_a ( sum_j sc_j (q . a)_j  -  offset sum_j sc_j bsum_j )
//
// x86: each 32-element chunk is one register of u8 weights; vpmaddubsw with the activation
// bytes, then vpmaddwd with the chunk's per-16 scales accumulates int32 lanes (as GGML's AVX2
// kernels do). Other targets: Highway integer dots per 16 elements, combined in scalar ints.
#include <cstring>

#include "plugins/kernels/kernels_internal.h"

namespace gguflow::kernels {
namespace {

// Q3_K's 16 6-bit scales packed in 12 bytes (GGML's layout), unpacked to 16 bytes (stored
// + 32) as four little-endian words.
inline void Q3ScaleWords(const uint8_t packed[12], uint32_t aux[4]) {
  constexpr uint32_t kmask1 = 0x03030303, kmask2 = 0x0f0f0f0f;
  std::memcpy(aux, packed, 12);
  const uint32_t tmp = aux[2];
  aux[2] = ((aux[0] >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4);
  aux[3] = ((aux[1] >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4);
  aux[0] = (aux[0] & kmask2) | (((tmp >> 0) & kmask1) << 4);
  aux[1] = (aux[1] & kmask2) | (((tmp >> 2) & kmask1) << 4);
}

// Q4_K/Q5_K: 8 6-bit scales and 8 6-bit mins packed in 12 bytes, unpacked with GGML's word
// masks to bytes 0..7 = scales, 8..15 = mins (one per 32 elements).
inline void ScaleMinK4Words(const uint8_t packed[12], uint32_t utmp[4]) {
  constexpr uint32_t kmask1 = 0x3f3f3f3f, kmask2 = 0x0f0f0f0f, kmask3 = 0x03030303;
  std::memcpy(utmp, packed, 12);
  utmp[3] = ((utmp[2] >> 4) & kmask2) | (((utmp[1] >> 6) & kmask3) << 4);
  const uint32_t uaux = utmp[1] & kmask1;
  utmp[1] = (utmp[2] & kmask2) | (((utmp[0] >> 6) & kmask3) << 4);
  utmp[2] = uaux;
  utmp[0] &= kmask1;
}

void Q3Scales(const uint8_t packed[12], int8_t sc[16]) {
  uint32_t aux[4];
  Q3ScaleWords(packed, aux);
  uint8_t bytes[16];
  std::memcpy(bytes, aux, 16);
  for (int j = 0; j < 16; ++j) sc[j] = static_cast<int8_t>(bytes[j] - 32);
}

void ScaleMinK4(const uint8_t packed[12], int8_t sc[16], int8_t coef[16]) {
  uint32_t utmp[4];
  ScaleMinK4Words(packed, utmp);
  uint8_t bytes[16];
  std::memcpy(bytes, utmp, 16);
  for (int j = 0; j < 8; ++j) {
    sc[2 * j] = sc[2 * j + 1] = static_cast<int8_t>(bytes[j]);
    coef[2 * j] = coef[2 * j + 1] = static_cast<int8_t>(bytes[8 + j]);
  }
}

#if GGUFLOW_X86_256
// Per-16 scale and coefficient bytes in registers (x86 path): built from words without a
// round trip through memory (16-byte reloads of 4-byte stores stall store forwarding).
inline __m128i WordsX86(const uint32_t w[4]) {
  return _mm_set_epi32(static_cast<int>(w[3]), static_cast<int>(w[2]), static_cast<int>(w[1]),
                       static_cast<int>(w[0]));
}
// Bytes 0..7 of v doubled to 16 (per-32 values to per-16 lanes), and bytes 8..15 likewise.
inline __m128i LowDoubledX86(__m128i v) {
  return _mm_shuffle_epi8(v, _mm_setr_epi8(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7));
}
inline __m128i HighDoubledX86(__m128i v) {
  return _mm_shuffle_epi8(v, _mm_setr_epi8(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15));
}
#endif

// ---- per-format traits: Chunk c (0..7) holds elements 32c .. 32c+31 ---------------------------

struct Q2K {
  using Block = block_q2_K;
  static constexpr int kOffsetShift = -1;
  static float Dmin(const Block& b) { return HalfToFloat(b.dmin); }  // no offset; has a min
  static void Prepare(const Block& b, KScales* s) {
    for (int j = 0; j < 16; ++j) {
      s->sc[j] = static_cast<int8_t>(b.scales[j] & 0xF);
      s->coef[j] = static_cast<int8_t>(b.scales[j] >> 4);
    }
    s->d = HalfToFloat(b.d);
    s->dmin = HalfToFloat(b.dmin);
  }
  static void Unpack(const Block& b, uint8_t q[256]) {
    for (int c = 0; c < 8; ++c)
      for (int l = 0; l < 32; ++l) q[32 * c + l] = (b.qs[32 * (c / 4) + l] >> (2 * (c % 4))) & 3;
  }
#if GGUFLOW_X86_256
  static void PrepareX86(const Block& b, __m128i& sc8, __m128i& coef8) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales));
    sc8 = _mm_and_si128(v, _mm_set1_epi8(0x0F));
    coef8 = _mm_and_si128(_mm_srli_epi16(v, 4), _mm_set1_epi8(0x0F));
  }
  static __m256i Chunk(const Block& b, int c) {
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * (c / 4)));
    return _mm256_and_si256(_mm256_srli_epi16(bits, 2 * (c % 4)), _mm256_set1_epi8(3));
  }
#endif
};

struct Q3K {
  using Block = block_q3_K;
  static constexpr int kOffsetShift = 2;  // q - 4
  static void Prepare(const Block& b, KScales* s) {
    Q3Scales(b.scales, s->sc);
    std::memcpy(s->coef, s->sc, 16);
    s->d = HalfToFloat(b.d);
    s->dmin = 0.0f;
  }
  static void Unpack(const Block& b, uint8_t q[256]) {
    for (int c = 0; c < 8; ++c)
      for (int l = 0; l < 32; ++l)
        q[32 * c + l] = static_cast<uint8_t>(((b.qs[32 * (c / 4) + l] >> (2 * (c % 4))) & 3) |
                                             (((b.hmask[l] >> c) & 1) << 2));
  }
#if GGUFLOW_X86_256
  static void PrepareX86(const Block& b, __m128i& sc8, __m128i& coef8) {
    uint32_t aux[4];
    Q3ScaleWords(b.scales, aux);
    sc8 = coef8 = _mm_sub_epi8(WordsX86(aux), _mm_set1_epi8(32));
  }
  static __m256i Chunk(const Block& b, int c) {
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * (c / 4)));
    const __m256i low = _mm256_and_si256(_mm256_srli_epi16(bits, 2 * (c % 4)), _mm256_set1_epi8(3));
    const __m256i hm = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.hmask));
    const __m256i high = _mm256_and_si256(_mm256_srli_epi16(hm, c), _mm256_set1_epi8(1));
    return _mm256_or_si256(low, _mm256_slli_epi16(high, 2));
  }
#endif
};

struct Q4K {
  using Block = block_q4_K;
  static constexpr int kOffsetShift = -1;
  static float Dmin(const Block& b) { return HalfToFloat(b.dmin); }
  static void Prepare(const Block& b, KScales* s) {
    ScaleMinK4(b.scales, s->sc, s->coef);
    s->d = HalfToFloat(b.d);
    s->dmin = HalfToFloat(b.dmin);
  }
  static void Unpack(const Block& b, uint8_t q[256]) {
    for (int c = 0; c < 8; ++c)
      for (int l = 0; l < 32; ++l) q[32 * c + l] = (b.qs[32 * (c / 2) + l] >> (4 * (c % 2))) & 0xF;
  }
#if GGUFLOW_X86_256
  static void PrepareX86(const Block& b, __m128i& sc8, __m128i& coef8) {
    uint32_t utmp[4];
    ScaleMinK4Words(b.scales, utmp);
    const __m128i v = WordsX86(utmp);
    sc8 = LowDoubledX86(v);
    coef8 = HighDoubledX86(v);
  }
  static __m256i Chunk(const Block& b, int c) {
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * (c / 2)));
    return _mm256_and_si256(_mm256_srli_epi16(bits, 4 * (c % 2)), _mm256_set1_epi8(0x0F));
  }
#endif
};

struct Q5K {
  using Block = block_q5_K;
  static constexpr int kOffsetShift = -1;
  static float Dmin(const Block& b) { return HalfToFloat(b.dmin); }
  static void Prepare(const Block& b, KScales* s) {
    ScaleMinK4(b.scales, s->sc, s->coef);
    s->d = HalfToFloat(b.d);
    s->dmin = HalfToFloat(b.dmin);
  }
  static void Unpack(const Block& b, uint8_t q[256]) {
    for (int c = 0; c < 8; ++c)
      for (int l = 0; l < 32; ++l)
        q[32 * c + l] = static_cast<uint8_t>(((b.qs[32 * (c / 2) + l] >> (4 * (c % 2))) & 0xF) |
                                             (((b.qh[l] >> c) & 1) << 4));
  }
#if GGUFLOW_X86_256
  static void PrepareX86(const Block& b, __m128i& sc8, __m128i& coef8) {
    uint32_t utmp[4];
    ScaleMinK4Words(b.scales, utmp);
    const __m128i v = WordsX86(utmp);
    sc8 = LowDoubledX86(v);
    coef8 = HighDoubledX86(v);
  }
  static __m256i Chunk(const Block& b, int c) {
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * (c / 2)));
    const __m256i low = _mm256_and_si256(_mm256_srli_epi16(bits, 4 * (c % 2)), _mm256_set1_epi8(0x0F));
    const __m256i hb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh));
    const __m256i high = _mm256_and_si256(_mm256_srli_epi16(hb, c), _mm256_set1_epi8(1));
    return _mm256_or_si256(low, _mm256_slli_epi16(high, 4));
  }
#endif
};

struct Q6K {
  using Block = block_q6_K;
  static constexpr int kOffsetShift = 5;  // q - 32
  static void Prepare(const Block& b, KScales* s) {
    std::memcpy(s->sc, b.scales, 16);
    std::memcpy(s->coef, b.scales, 16);
    s->d = HalfToFloat(b.d);
    s->dmin = 0.0f;
  }
  // Chunk c = 4h + k: low nibbles from ql[64h + 32(k&1) + l] (shift 4(k>>1)), 2 high bits from
  // qh[32h + l] (shift 2k).
  static void Unpack(const Block& b, uint8_t q[256]) {
    for (int c = 0; c < 8; ++c) {
      const int h = c / 4, k = c % 4;
      for (int l = 0; l < 32; ++l) {
        const int low = (b.ql[64 * h + 32 * (k & 1) + l] >> (4 * (k >> 1))) & 0xF;
        const int high = (b.qh[32 * h + l] >> (2 * k)) & 3;
        q[32 * c + l] = static_cast<uint8_t>(low | (high << 4));
      }
    }
  }
#if GGUFLOW_X86_256
  static void PrepareX86(const Block& b, __m128i& sc8, __m128i& coef8) {
    sc8 = coef8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales));
  }
  static __m256i Chunk(const Block& b, int c) {
    const int h = c / 4, k = c % 4;
    const __m256i ql = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + 64 * h + 32 * (k & 1)));
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh + 32 * h));
    const __m256i low = _mm256_and_si256(_mm256_srli_epi16(ql, 4 * (k >> 1)), _mm256_set1_epi8(0x0F));
    const __m256i high = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * k), _mm256_set1_epi8(3));
    return _mm256_or_si256(low, _mm256_slli_epi16(high, 4));
  }
#endif
};

#if GGUFLOW_X86_256
// Byte shuffles that spread per-16 scales j = 2c, 2c+1 over the 16 i16 lanes of chunk c.
alignas(16) constexpr uint8_t kSpread[8][16] = {
    {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1},
    {2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3},
    {4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5},
    {6, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7},
    {8, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9},
    {10, 10, 10, 10, 10, 10, 10, 10, 11, 11, 11, 11, 11, 11, 11, 11},
    {12, 12, 12, 12, 12, 12, 12, 12, 13, 13, 13, 13, 13, 13, 13, 13},
    {14, 14, 14, 14, 14, 14, 14, 14, 15, 15, 15, 15, 15, 15, 15, 15}};

// Chunk c's 16 i16 scale lanes (elements 32c..32c+15 -> sc[2c], 32c+16..32c+31 -> sc[2c+1]).
inline __m256i SpreadScales(__m128i sc8, int c) {
  return _mm256_cvtepi8_epi16(
      _mm_shuffle_epi8(sc8, _mm_load_si128(reinterpret_cast<const __m128i*>(kSpread[c]))));
}

// The float part of one (super-block, activation) pair, shared by the direct path (mat_vec)
// and the pre-decoded path (mat_mat) so both perform the same float operations in the same
// order: isum are the 8 int32 lanes of sum_c madd(maddubs(q_c, a_c), scale_c) (exact, so any
// integer evaluation order gives the same lanes), coef the 16 i16 per-16 coefficients.
template <class Fmt>
inline void FinishBlock(__m256i isum, const block_q8_K& ab, __m256i coef, float d, float dmin,
                        __m256& acc, __m256& acc_min) {
  const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab.bsums));
  const __m256i corr = _mm256_madd_epi16(bsums, coef);
  const float da = ab.d;
  if constexpr (Fmt::kOffsetShift < 0) {
    acc_min = _mm256_fmadd_ps(_mm256_set1_ps(dmin * da), _mm256_cvtepi32_ps(corr), acc_min);
  } else {
    (void)dmin;
    isum = _mm256_sub_epi32(isum, _mm256_slli_epi32(corr, Fmt::kOffsetShift));
  }
  acc = _mm256_fmadd_ps(_mm256_set1_ps(d * da), _mm256_cvtepi32_ps(isum), acc);
}

template <class Fmt>
inline float FinishDot(__m256 acc, __m256 acc_min) {
  if constexpr (Fmt::kOffsetShift < 0) return HorizontalSum(acc) - HorizontalSum(acc_min);
  (void)acc_min;
  return HorizontalSum(acc);
}
#endif

template <class Fmt>
struct KQuantKernel {
  using Block = typename Fmt::Block;
  static constexpr bool kHasMin = Fmt::kOffsetShift < 0;

  template <int NA>
  static void DotTile(const char* row, const char* const* acts, int64_t n, float* out) {
    const Block* w = reinterpret_cast<const Block*>(row);
    const block_q8_K* a[NA];
    for (int i = 0; i < NA; ++i) a[i] = reinterpret_cast<const block_q8_K*>(acts[i]);
    const int64_t nb = n / 256;
#if GGUFLOW_X86_256
    __m256 acc[NA], acc_min[NA];
    for (int i = 0; i < NA; ++i) acc[i] = acc_min[i] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      __m128i sc8, coef8;
      Fmt::PrepareX86(w[b], sc8, coef8);
      const float d = HalfToFloat(w[b].d);
      __m256i isum[NA];
      for (int i = 0; i < NA; ++i) isum[i] = _mm256_setzero_si256();
#pragma GCC unroll 8
      for (int c = 0; c < 8; ++c) {
        const __m256i q = Fmt::Chunk(w[b], c);
        const __m256i scale = SpreadScales(sc8, c);
        for (int i = 0; i < NA; ++i) {
          const __m256i act = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[i][b].qs + 32 * c));
          const __m256i prod = _mm256_maddubs_epi16(q, act);
          isum[i] = _mm256_add_epi32(isum[i], _mm256_madd_epi16(prod, scale));
          // An empty asm that "changes" isum keeps the 8 adds a chain: without it GCC
          // reassociates them into a tree over all 8 * NA products and spills most of them
          // (mat_mat ~25 % slower). Integer adds are exact, so the lanes are the same either way.
          asm("" : "+x"(isum[i]));
        }
      }
      const __m256i coef = _mm256_cvtepi8_epi16(coef8);
      float dmin = 0.0f;
      if constexpr (kHasMin) dmin = Fmt::Dmin(w[b]);
      for (int i = 0; i < NA; ++i) FinishBlock<Fmt>(isum[i], a[i][b], coef, d, dmin, acc[i], acc_min[i]);
    }
    for (int i = 0; i < NA; ++i) out[i] = FinishDot<Fmt>(acc[i], acc_min[i]);
#else
    float acc[NA], acc_min[NA];
    for (int i = 0; i < NA; ++i) acc[i] = acc_min[i] = 0.0f;
    alignas(64) uint8_t q[256];
    for (int64_t b = 0; b < nb; ++b) {
      KScales s;
      Fmt::Prepare(w[b], &s);
      Fmt::Unpack(w[b], q);
      for (int i = 0; i < NA; ++i) {
        const block_q8_K& ab = a[i][b];
        int32_t isum = 0, corr = 0;
        for (int j = 0; j < 16; ++j) {
          // q < 64 fits int8, so the portable signed dot applies.
          isum += s.sc[j] * DotI8Portable(reinterpret_cast<const int8_t*>(q + 16 * j), ab.qs + 16 * j, 16);
          corr += s.coef[j] * ab.bsums[j];
        }
        if constexpr (kHasMin) {
          acc_min[i] += (s.dmin * ab.d) * static_cast<float>(corr);
        } else {
          isum -= corr * (1 << Fmt::kOffsetShift);
        }
        acc[i] += (s.d * ab.d) * static_cast<float>(isum);
      }
    }
    for (int i = 0; i < NA; ++i) out[i] = kHasMin ? acc[i] - acc_min[i] : acc[i];
#endif
  }
};

#if GGUFLOW_X86_256
// ---- mat_mat: weight rows decoded once per row tile, reused by every activation tile -------
// In DotTile every (row, activation tile) pair unpacks the weight bits and spreads the scales
// again, which for a tile of 4 costs more than the 4 activations' multiplies. Here a tile of
// rows is decoded once into a stack buffer (L2-resident) and each activation tile then costs
// maddubs, madd, add per (chunk, activation). The integer lanes and the float operations per
// (row, activation) are those of DotTile (FinishBlock, FinishDot), so the bits are the same.

// One super-block, decoded. 576 bytes.
struct alignas(32) DecodedKBlock {
  uint8_t q[8][32];      // chunk c: the unsigned weights of elements 32c .. 32c+31 (0..63)
  int16_t scale[8][16];  // chunk c: its 16 i16 madd lanes (SpreadScales)
  int16_t coef[16];      // per-16 coefficients of the activation's bsums
  float d;               // super-block scale
  float dmin;            // super-block min scale (formats with a min; 0 otherwise)
};

// Decoded super-blocks per row tile (54 KiB of stack); rows longer than this use DotTile.
constexpr int64_t kDecodedBudgetBlocks = 96;
constexpr int64_t kDecodedMaxRows = 8;
// Activations per inner tile: each decoded chunk is loaded once per tile.
constexpr int kDecodedActTile = 4;

template <class Fmt>
void DecodeRow(const typename Fmt::Block* w, int64_t nb, DecodedKBlock* out) {
  for (int64_t b = 0; b < nb; ++b) {
    DecodedKBlock& o = out[b];
    __m128i sc8, coef8;
    Fmt::PrepareX86(w[b], sc8, coef8);
#pragma GCC unroll 8
    for (int c = 0; c < 8; ++c) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(o.q[c]), Fmt::Chunk(w[b], c));
      _mm256_store_si256(reinterpret_cast<__m256i*>(o.scale[c]), SpreadScales(sc8, c));
    }
    _mm256_store_si256(reinterpret_cast<__m256i*>(o.coef), _mm256_cvtepi8_epi16(coef8));
    o.d = HalfToFloat(w[b].d);
    o.dmin = 0.0f;
    if constexpr (Fmt::kOffsetShift < 0) o.dmin = Fmt::Dmin(w[b]);
  }
}

// out[i] = dot(decoded row, activation row i) for i < NA.
template <class Fmt, int NA>
void DotDecoded(const DecodedKBlock* wb, const block_q8_K* const* a, int64_t nb, float* out) {
  __m256 acc[NA], acc_min[NA];
  for (int i = 0; i < NA; ++i) acc[i] = acc_min[i] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const DecodedKBlock& k = wb[b];
    __m256i isum[NA];
    for (int i = 0; i < NA; ++i) isum[i] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int c = 0; c < 8; ++c) {
      const __m256i q = _mm256_load_si256(reinterpret_cast<const __m256i*>(k.q[c]));
      const __m256i scale = _mm256_load_si256(reinterpret_cast<const __m256i*>(k.scale[c]));
      for (int i = 0; i < NA; ++i) {
        const __m256i act = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[i][b].qs + 32 * c));
        isum[i] = _mm256_add_epi32(isum[i], _mm256_madd_epi16(_mm256_maddubs_epi16(q, act), scale));
        asm("" : "+x"(isum[i]));  // a chain, not a tree of spilled products (see DotTile)
      }
    }
    const __m256i coef = _mm256_load_si256(reinterpret_cast<const __m256i*>(k.coef));
    for (int i = 0; i < NA; ++i) FinishBlock<Fmt>(isum[i], a[i][b], coef, k.d, k.dmin, acc[i], acc_min[i]);
  }
  for (int i = 0; i < NA; ++i) out[i] = FinishDot<Fmt>(acc[i], acc_min[i]);
}

// DotDecoded for a run-time tile size 1..kDecodedActTile.
template <class Fmt, int NA = kDecodedActTile>
void DotDecodedAny(int na, const DecodedKBlock* wb, const block_q8_K* const* a, int64_t nb, float* out) {
  if constexpr (NA > 1) {
    if (na < NA) return DotDecodedAny<Fmt, NA - 1>(na, wb, a, nb, out);
  }
  DotDecoded<Fmt, NA>(wb, a, nb, out);
}

// mat_mat through decoded row tiles; false (nothing computed) when one row does not fit.
template <class Fmt>
bool RunDecoded(const MatMulArgs& args) {
  const int64_t nb = args.n / 256;
  if (nb > kDecodedBudgetBlocks) return false;
  const int64_t row_tile = std::min<int64_t>(kDecodedMaxRows, kDecodedBudgetBlocks / std::max<int64_t>(nb, 1));
  DecodedKBlock decoded[kDecodedBudgetBlocks];  // [row_tile][nb]
  const char* w = static_cast<const char*>(args.w);
  const char* act = static_cast<const char*>(args.act);
  for (int64_t r0 = args.row_begin; r0 < args.row_end; r0 += row_tile) {
    const int64_t r1 = std::min(args.row_end, r0 + row_tile);
    for (int64_t r = r0; r < r1; ++r)
      DecodeRow<Fmt>(reinterpret_cast<const typename Fmt::Block*>(w + r * args.w_row_bytes), nb,
                     decoded + (r - r0) * nb);
    for (int64_t a0 = 0; a0 < args.n_act; a0 += kDecodedActTile) {
      const int na = static_cast<int>(std::min<int64_t>(kDecodedActTile, args.n_act - a0));
      const block_q8_K* acts[kDecodedActTile];
      for (int i = 0; i < na; ++i)
        acts[i] = reinterpret_cast<const block_q8_K*>(act + (a0 + i) * args.act_row_bytes);
      for (int64_t r = r0; r < r1; ++r) {
        const DecodedKBlock* row = decoded + (r - r0) * nb;
        float out[kDecodedActTile];
        DotDecodedAny<Fmt>(na, row, acts, nb, out);
        for (int i = 0; i < na; ++i) args.y[(a0 + i) * args.y_stride + r] = out[i];
      }
    }
  }
  return true;
}
#endif

// mat_vec (one activation) unpacks in registers as it goes; mat_mat decodes row tiles first.
template <class Fmt>
void RunKQuant(const MatMulArgs& args) {
#if GGUFLOW_X86_256
  if (args.n_act > 1 && RunDecoded<Fmt>(args)) return;
#endif
  RunTiled<KQuantKernel<Fmt>>(args);
}

}  // namespace

void PrepareKScales(uint32_t w_type, const void* block, KScales* s) {
  switch (w_type) {
    case GGML_TYPE_Q2_K: Q2K::Prepare(*static_cast<const block_q2_K*>(block), s); break;
    case GGML_TYPE_Q3_K: Q3K::Prepare(*static_cast<const block_q3_K*>(block), s); break;
    case GGML_TYPE_Q4_K: Q4K::Prepare(*static_cast<const block_q4_K*>(block), s); break;
    case GGML_TYPE_Q5_K: Q5K::Prepare(*static_cast<const block_q5_K*>(block), s); break;
    case GGML_TYPE_Q6_K: Q6K::Prepare(*static_cast<const block_q6_K*>(block), s); break;
    default: std::memset(s, 0, sizeof(*s)); break;
  }
}

void UnpackKQuant(uint32_t w_type, const void* block, uint8_t q[256]) {
  switch (w_type) {
    case GGML_TYPE_Q2_K: Q2K::Unpack(*static_cast<const block_q2_K*>(block), q); break;
    case GGML_TYPE_Q3_K: Q3K::Unpack(*static_cast<const block_q3_K*>(block), q); break;
    case GGML_TYPE_Q4_K: Q4K::Unpack(*static_cast<const block_q4_K*>(block), q); break;
    case GGML_TYPE_Q5_K: Q5K::Unpack(*static_cast<const block_q5_K*>(block), q); break;
    case GGML_TYPE_Q6_K: Q6K::Unpack(*static_cast<const block_q6_K*>(block), q); break;
    default: std::memset(q, 0, 256); break;
  }
}

int KQuantOffset(uint32_t w_type) {
  return w_type == GGML_TYPE_Q3_K ? 4 : w_type == GGML_TYPE_Q6_K ? 32 : 0;
}

bool KQuantHasMin(uint32_t w_type) {
  return w_type == GGML_TYPE_Q2_K || w_type == GGML_TYPE_Q4_K || w_type == GGML_TYPE_Q5_K;
}

bool MatMulKQuant(uint32_t w_type, const MatMulArgs& args) {
  switch (w_type) {
    case GGML_TYPE_Q2_K: RunKQuant<Q2K>(args); return true;
    case GGML_TYPE_Q3_K: RunKQuant<Q3K>(args); return true;
    case GGML_TYPE_Q4_K: RunKQuant<Q4K>(args); return true;
    case GGML_TYPE_Q5_K: RunKQuant<Q5K>(args); return true;
    case GGML_TYPE_Q6_K: RunKQuant<Q6K>(args); return true;
    default: return false;
  }
}

}  // namespace gguflow::kernels
