// Fused dequantize-and-dot for the 32-element block formats Q4_0, Q5_0, Q8_0 (activations in
// Q8_0) and Q4_1, Q5_1 (activations in Q8_1), as GGML computes them: per block an exact
// integer dot of the weight integers with the activation integers, then one float multiply by
// d_w * d_a (plus m_w * s_a for the formats with a min), accumulated over the row.
//
// x86 (AVX2/AVX3/AVX3_DL): the weight block is unpacked into one 32-byte register; signed
// formats use GGML's sign trick (|w| * sign(a, w) with vpmaddubsw). Float
// accumulation runs in 8 lanes, summed once at the end of the row. Other targets: a portable
// Highway integer dot per block and a scalar float accumulation.
#include <cstring>

#include "plugins/kernels/kernels_internal.h"

namespace gguflow::kernels {
namespace {

// ---- scalar unpacking (portable path, dequantization) -----------------------------------------

void UnpackNibbles(const uint8_t qs[16], int8_t q[32]) {
  for (int j = 0; j < 16; ++j) {
    q[j] = static_cast<int8_t>(qs[j] & 0x0F);
    q[j + 16] = static_cast<int8_t>(qs[j] >> 4);
  }
}

void AddFifthBits(const uint8_t qh_bytes[4], int8_t q[32]) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, 4);
  for (int j = 0; j < 32; ++j) q[j] = static_cast<int8_t>(q[j] | (((qh >> j) & 1) << 4));
}

// ---- per-format traits ------------------------------------------------------------------------
// Block/ActBlock: layouts. kSigned: weight integers are signed (sign trick) rather than
// unsigned with a min. kOffset: for Q4_0/Q5_0 the stored integers are q + kOffset in
// [0, 2 * kOffset) (0: not such a format). Unpack: the weight integers of one block in element
// order.

struct Q4_0 {
  using Block = block_q4_0;
  using ActBlock = block_q8_0;
  static constexpr int kOffset = 8;
  static constexpr bool kSigned = true;
  static void UnpackScalar(const Block& b, int8_t q[32]) {
    UnpackNibbles(b.qs, q);
    for (int j = 0; j < 32; ++j) q[j] = static_cast<int8_t>(q[j] - 8);
  }
};
struct Q4_1 {
  using Block = block_q4_1;
  using ActBlock = block_q8_1;
  static constexpr int kOffset = 0;
  static constexpr bool kSigned = false;
  static void UnpackScalar(const Block& b, int8_t q[32]) { UnpackNibbles(b.qs, q); }
};
struct Q5_0 {
  using Block = block_q5_0;
  using ActBlock = block_q8_0;
  static constexpr int kOffset = 16;
  static constexpr bool kSigned = true;
  static void UnpackScalar(const Block& b, int8_t q[32]) {
    UnpackNibbles(b.qs, q);
    AddFifthBits(b.qh, q);
    for (int j = 0; j < 32; ++j) q[j] = static_cast<int8_t>(q[j] - 16);
  }
};
struct Q5_1 {
  using Block = block_q5_1;
  using ActBlock = block_q8_1;
  static constexpr int kOffset = 0;
  static constexpr bool kSigned = false;
  static void UnpackScalar(const Block& b, int8_t q[32]) {
    UnpackNibbles(b.qs, q);
    AddFifthBits(b.qh, q);
  }
};
struct Q8_0 {
  using Block = block_q8_0;
  using ActBlock = block_q8_0;
  static constexpr int kOffset = 0;
  static constexpr bool kSigned = true;
  static void UnpackScalar(const Block& b, int8_t q[32]) { std::memcpy(q, b.qs, 32); }
};

// m_w * s_a for the min formats (Q4_1/Q5_1 with Q8_1 activations), else nothing.
template <class Fmt>
float MinTerm(const typename Fmt::Block& w, const typename Fmt::ActBlock& a) {
  if constexpr (Fmt::kSigned) {
    (void)w, (void)a;
    return 0.0f;
  } else {
    return HalfToFloat(w.m) * HalfToFloat(a.s);
  }
}

#if GGUFLOW_X86_256
// Bytes 0..15 = low nibbles of qs[0..15], bytes 16..31 = high nibbles (element order).
inline __m256i NibblesX86(const uint8_t* qs) {
  const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m256i both = _mm256_set_m128i(_mm_srli_epi16(packed, 4), packed);
  return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

// 0xFF in byte j where bit j of the 32-bit mask is set.
inline __m256i BitsToBytesX86(const uint8_t* qh_bytes) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, 4);
  const __m256i shuffle = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202,
                                            0x0101010101010101, 0x0000000000000000);
  __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(qh)), shuffle);
  bytes = _mm256_or_si256(bytes, _mm256_set1_epi64x(0x7fbfdfeff7fbfdfe));
  return _mm256_cmpeq_epi8(bytes, _mm256_set1_epi64x(-1));
}

inline __m256i UnpackX86(const block_q4_0& b) {
  return _mm256_sub_epi8(NibblesX86(b.qs), _mm256_set1_epi8(8));
}
inline __m256i UnpackX86(const block_q4_1& b) { return NibblesX86(b.qs); }
inline __m256i UnpackX86(const block_q5_0& b) {
  // q - 16 as int8: set the top nibble to 0xF where the 5th bit is clear.
  const __m256i high = _mm256_andnot_si256(BitsToBytesX86(b.qh), _mm256_set1_epi8(char(0xF0)));
  return _mm256_or_si256(NibblesX86(b.qs), high);
}
inline __m256i UnpackX86(const block_q5_1& b) {
  const __m256i high = _mm256_and_si256(BitsToBytesX86(b.qh), _mm256_set1_epi8(0x10));
  return _mm256_or_si256(NibblesX86(b.qs), high);
}
inline __m256i UnpackX86(const block_q8_0& b) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs));
}

// The stored integers q + kOffset (unsigned) of the offset formats.
inline __m256i UnpackStoredX86(const block_q4_0& b) { return NibblesX86(b.qs); }
inline __m256i UnpackStoredX86(const block_q5_0& b) {
  const __m256i high = _mm256_and_si256(BitsToBytesX86(b.qh), _mm256_set1_epi8(0x10));
  return _mm256_or_si256(NibblesX86(b.qs), high);
}
template <class Block>
inline __m256i UnpackStoredX86(const Block&) {  // not an offset format; never called
  return _mm256_setzero_si256();
}
#endif

template <class Fmt>
struct Block32Kernel {
  using Block = typename Fmt::Block;
  using ActBlock = typename Fmt::ActBlock;
  static constexpr int kOffset = Fmt::kOffset;

#if GGUFLOW_X86_256
  // acc + (d_w * d_a) * float(exact integer dot of one block). `q`: the weight integers, `u`:
  // the unsigned operand (|q| for the signed formats).
  // `da`: the activation block's scale, HalfToFloat(ab.d).
  static inline __m256 Step(__m256i q, __m256i u, float dw, const ActBlock& ab, float da,
                            __m256 acc) {
    __m256i s = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab.qs));
    if (Fmt::kSigned) s = _mm256_sign_epi8(s, q);
    const __m256 sum = _mm256_cvtepi32_ps(DotU8I8(u, s));
    return _mm256_fmadd_ps(_mm256_set1_ps(dw * da), sum, acc);
  }
#endif

  // out[r * NA + i] = dot(rows[r], acts[i]) for r < NR, i < NA. The operations that produce
  // one (row, activation) pair do not depend on NR, NA or the other pairs: blocks in order into
  // one 8-lane accumulator (the float order the reference-logits bounds were set with), then
  // HorizontalSum + the min terms. So mat_vec (one activation) and mat_mat (NA activations)
  // give the same bits.
  // kPreScaled (NA == 1 only): `act_scales` holds the activation row's block scales already
  // decoded to float (the same values as HalfToFloat of each block's d), saving the conversion
  // per weight row; otherwise it is unused. act_sums (kPreScaled, offset formats): [nb][8]
  // kOffset * the sum of each 4 activation integers, 32-byte aligned.
  template <int NR, int NA, bool kPreScaled = false>
  static void Dot(const char* const* rows, const char* const* acts, int64_t n, float* out,
                  const float* act_scales = nullptr, const int32_t* act_sums = nullptr) {
    const Block* w[NR];
    for (int r = 0; r < NR; ++r) w[r] = reinterpret_cast<const Block*>(rows[r]);
    const ActBlock* a[NA];
    for (int i = 0; i < NA; ++i) a[i] = reinterpret_cast<const ActBlock*>(acts[i]);
    const int64_t nb = n / 32;
    float min_sum[NR][NA];
    for (int r = 0; r < NR; ++r)
      for (int i = 0; i < NA; ++i) min_sum[r][i] = 0.0f;
#if GGUFLOW_X86_256
    __m256 acc[NR][NA];
    for (int r = 0; r < NR; ++r)
      for (int i = 0; i < NA; ++i) acc[r][i] = _mm256_setzero_ps();
    if constexpr (kPreScaled && Fmt::kOffset > 0 && NA == 1) {
      // Offset formats in mat_vec: the 8 int32 lanes of the block dot are computed as
      // dot(q + kOffset, a) - kOffset * sum(a) (act_sums holds the second term per block and
      // lane) instead of with the sign trick: the same exact integers, fewer instructions.
      for (int64_t b = 0; b < nb; ++b) {
        for (int r = 0; r < NR; ++r) {
          const __m256i u = UnpackStoredX86(w[r][b]);
          const __m256i s = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[0][b].qs));
          const __m256i lanes = _mm256_sub_epi32(
              DotU8I8(u, s), _mm256_load_si256(reinterpret_cast<const __m256i*>(act_sums + 8 * b)));
          const float dw = HalfToFloat(w[r][b].d);
          acc[r][0] = _mm256_fmadd_ps(_mm256_set1_ps(dw * act_scales[b]),
                                      _mm256_cvtepi32_ps(lanes), acc[r][0]);
        }
      }
      for (int r = 0; r < NR; ++r) out[r] = HorizontalSum(acc[r][0]);
      return;
    }
    for (int64_t b = 0; b < nb; ++b) {
      for (int r = 0; r < NR; ++r) {
        const __m256i q = UnpackX86(w[r][b]);
        // Signed formats: |w| as the unsigned operand, the activation takes w's sign.
        const __m256i u = Fmt::kSigned ? _mm256_sign_epi8(q, q) : q;
        const float dw = HalfToFloat(w[r][b].d);
        for (int i = 0; i < NA; ++i) {
          const float da = kPreScaled ? act_scales[b] : HalfToFloat(a[i][b].d);
          acc[r][i] = Step(q, u, dw, a[i][b], da, acc[r][i]);
          if (!Fmt::kSigned) min_sum[r][i] += MinTerm<Fmt>(w[r][b], a[i][b]);
        }
      }
    }
    for (int r = 0; r < NR; ++r)
      for (int i = 0; i < NA; ++i) out[r * NA + i] = HorizontalSum(acc[r][i]) + min_sum[r][i];
#else
    (void)act_scales, (void)act_sums;  // the portable path decodes inline
    float acc[NR][NA];
    for (int r = 0; r < NR; ++r)
      for (int i = 0; i < NA; ++i) acc[r][i] = 0.0f;
    alignas(64) int8_t q[32];
    for (int64_t b = 0; b < nb; ++b) {
      for (int r = 0; r < NR; ++r) {
        Fmt::UnpackScalar(w[r][b], q);
        const float dw = HalfToFloat(w[r][b].d);
        for (int i = 0; i < NA; ++i) {
          const ActBlock& ab = a[i][b];
          const int32_t sum = DotI8Portable(q, ab.qs, 32);
          acc[r][i] += (dw * HalfToFloat(ab.d)) * static_cast<float>(sum);
          if (!Fmt::kSigned) min_sum[r][i] += MinTerm<Fmt>(w[r][b], ab);
        }
      }
    }
    for (int r = 0; r < NR; ++r)
      for (int i = 0; i < NA; ++i) out[r * NA + i] = acc[r][i] + min_sum[r][i];
#endif
  }

  // RunTiled's interface (one weight row, NA activation rows): prefill.
  template <int NA>
  static void DotTile(const char* row, const char* const* acts, int64_t n, float* out) {
    Dot<1, NA>(&row, acts, n, out);
  }
};

// mat_vec (n_act == 1) with the activation scales decoded once per call; mat_mat through
// RunTiled. Both reach every (row, activation) pair through Block32Kernel::Dot, whose per-pair
// bits do not depend on the path (the pre-decoded scales are the same floats).
template <class Kernel>
void RunBlock32(const MatMulArgs& args) {
  constexpr int64_t kMaxScales = 512;  // rows of up to 16384 elements; longer: decode inline
  const int64_t nb = args.n / 32;
  if (args.n_act != 1 || nb > kMaxScales) {
    RunTiled<Kernel>(args);
    return;
  }
  const char* w = static_cast<const char*>(args.w);
  const char* act = static_cast<const char*>(args.act);
  float scales[kMaxScales];  // [nb] the activation row's block scales
  const auto* ab = reinterpret_cast<const typename Kernel::ActBlock*>(act);
  for (int64_t b = 0; b < nb; ++b) scales[b] = HalfToFloat(ab[b].d);
  const int32_t* sums = nullptr;
#if GGUFLOW_X86_256
  alignas(32) int32_t sums_buf[Kernel::kOffset > 0 ? kMaxScales * 8 : 8];  // [nb][8]
  if constexpr (Kernel::kOffset > 0) {
    const __m256i offset = _mm256_set1_epi8(static_cast<char>(Kernel::kOffset));
    for (int64_t b = 0; b < nb; ++b) {
      const __m256i s = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab[b].qs));
      _mm256_store_si256(reinterpret_cast<__m256i*>(sums_buf + 8 * b), DotU8I8(offset, s));
    }
    sums = sums_buf;
  }
#endif
  for (int64_t r = args.row_begin; r < args.row_end; ++r) {
    const char* row = w + r * args.w_row_bytes;
    Kernel::template Dot<1, 1, true>(&row, &act, args.n, args.y + r, scales, sums);
  }
}

}  // namespace

void UnpackBlock32(uint32_t w_type, const void* block, int8_t q[32]) {
  switch (w_type) {
    case GGML_TYPE_Q4_0: Q4_0::UnpackScalar(*static_cast<const block_q4_0*>(block), q); break;
    case GGML_TYPE_Q4_1: Q4_1::UnpackScalar(*static_cast<const block_q4_1*>(block), q); break;
    case GGML_TYPE_Q5_0: Q5_0::UnpackScalar(*static_cast<const block_q5_0*>(block), q); break;
    case GGML_TYPE_Q5_1: Q5_1::UnpackScalar(*static_cast<const block_q5_1*>(block), q); break;
    case GGML_TYPE_Q8_0: Q8_0::UnpackScalar(*static_cast<const block_q8_0*>(block), q); break;
    default: std::memset(q, 0, 32); break;
  }
}

bool MatMulBlock32(uint32_t w_type, const MatMulArgs& args) {
  switch (w_type) {
    case GGML_TYPE_Q4_0: RunBlock32<Block32Kernel<Q4_0>>(args); return true;
    case GGML_TYPE_Q4_1: RunBlock32<Block32Kernel<Q4_1>>(args); return true;
    case GGML_TYPE_Q5_0: RunBlock32<Block32Kernel<Q5_0>>(args); return true;
    case GGML_TYPE_Q5_1: RunBlock32<Block32Kernel<Q5_1>>(args); return true;
    case GGML_TYPE_Q8_0: RunBlock32<Block32Kernel<Q8_0>>(args); return true;
    default: return false;
  }
}

}  // namespace gguflow::kernels
