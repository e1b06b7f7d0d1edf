// Fused dequantize-and-dot for the 32-element block formats Q4_0, Q5_0, Q8_0 (activations in
// Q8_0) and Q4_1, Q5_1 (activations in Q8_1), as GGML computes them: per block an exact
// integer dot of the weight integers with the activation integers, then one float multiply by
// d_w * d_a (plus m_w * s_a for the formats with a min), accumulated over the row.
//
// x86 (AVX2/AVX3/AVX3_DL): the weight block is unpacked into one 32-byte register. Q4_0 and
// Q5_0 multiply their stored integers q + offset (unsigned) with the activation and subtract
// offset * (sum of the activation integers), a term decoded once per activation row and shared
// by every weight row (ActivationTerms); Q8_0 uses GGML's sign trick (|w| * sign(a, w) with
// vpmaddubsw), since q + 128 could saturate vpmaddubsw's 16-bit sums. Both give the same exact
// 8 integer lanes per block. Float accumulation runs in 8 lanes, summed once at the end of the
// row. Other targets: a portable Highway integer dot per block and a scalar float accumulation.
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
// UnpackStoredX86 (the stored integers q + kOffset of Q4_0 and Q5_0) is kernels_internal.h's,
// in the enclosing namespace: a fallback template here would hide those overloads from the
// unqualified call in DotDecoded (the block types are global C structs, so no argument-
// dependent lookup brings them back), and every Q4_0/Q5_0 block would dot as zero minus the
// offset term. DotDecoded calls it only under `if constexpr (kOffset > 0)`.
#endif

template <class Fmt>
struct Block32Kernel {
  using Format = Fmt;
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
  // give the same bits, and so does DotDecoded below (the same 8 exact integer lanes per block,
  // the same floats).
  template <int NR, int NA>
  static void Dot(const char* const* rows, const char* const* acts, int64_t n, float* out) {
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
    for (int64_t b = 0; b < nb; ++b) {
      for (int r = 0; r < NR; ++r) {
        const __m256i q = UnpackX86(w[r][b]);
        // Signed formats: |w| as the unsigned operand, the activation takes w's sign.
        const __m256i u = Fmt::kSigned ? _mm256_sign_epi8(q, q) : q;
        const float dw = HalfToFloat(w[r][b].d);
        for (int i = 0; i < NA; ++i) {
          acc[r][i] = Step(q, u, dw, a[i][b], HalfToFloat(a[i][b].d), acc[r][i]);
          if (!Fmt::kSigned) min_sum[r][i] += MinTerm<Fmt>(w[r][b], a[i][b]);
        }
      }
    }
    for (int r = 0; r < NR; ++r)
      for (int i = 0; i < NA; ++i) out[r * NA + i] = HorizontalSum(acc[r][i]) + min_sum[r][i];
#else
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

#if GGUFLOW_X86_256
// The activation side of up to NA activation rows of up to MaxBlocks blocks, decoded once and
// shared by every weight row: each block's scale as a float (HalfToFloat of its d) and, for the
// offset formats (Q4_0, Q5_0 against Q8_0 activations; kOffset > 0), per 32-bit lane of the
// block dot kOffset * (the sum of the lane's 4 activation integers), the term that the dot with
// the stored integers q + kOffset over-counts.
template <class Kernel, int NA, int64_t MaxBlocks>
struct ActivationTerms {
  static constexpr bool kSums = Kernel::kOffset > 0;
  const typename Kernel::ActBlock* act[NA];
  float scale[NA][MaxBlocks];
  alignas(32) int32_t sum[NA][kSums ? MaxBlocks : 1][8];

  void Fill(const char* const* acts, int64_t nb) {
    const __m256i offset = _mm256_set1_epi8(static_cast<char>(Kernel::kOffset));
    for (int i = 0; i < NA; ++i) {
      act[i] = reinterpret_cast<const typename Kernel::ActBlock*>(acts[i]);
      for (int64_t b = 0; b < nb; ++b) {
        scale[i][b] = HalfToFloat(act[i][b].d);
        if constexpr (kSums) {
          const __m256i s = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act[i][b].qs));
          _mm256_store_si256(reinterpret_cast<__m256i*>(sum[i][b]), DotU8I8(offset, s));
        }
      }
    }
  }
};

// out[i] = dot(row, activation i) for the NA rows of `t`, the weight block unpacked once for
// all of them (prefill reuse). Per block and activation: the offset formats take the 8 lanes
// dot(q + kOffset, a) - t.sum, the same exact integers as the sign trick of Dot without its
// per-activation sign; the others are Dot's Step. Then dw * da into one 8-lane accumulator per
// activation, as Dot does, so every (row, activation) pair gets Dot's bits.
template <class Kernel, int NA, class Terms>
void DotDecoded(const char* row, const Terms& t, int64_t nb, float* out) {
  const auto* w = reinterpret_cast<const typename Kernel::Block*>(row);
  __m256 acc[NA];
  float min_sum[NA];
  for (int i = 0; i < NA; ++i) acc[i] = _mm256_setzero_ps(), min_sum[i] = 0.0f;
  for (int64_t b = 0; b < nb; ++b) {
    const float dw = HalfToFloat(w[b].d);
    if constexpr (Kernel::kOffset > 0) {
      const __m256i u = UnpackStoredX86(w[b]);
      for (int i = 0; i < NA; ++i) {
        const __m256i s = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.act[i][b].qs));
        const __m256i lanes =
            _mm256_sub_epi32(DotU8I8(u, s), _mm256_load_si256(reinterpret_cast<const __m256i*>(t.sum[i][b])));
        acc[i] = _mm256_fmadd_ps(_mm256_set1_ps(dw * t.scale[i][b]), _mm256_cvtepi32_ps(lanes), acc[i]);
      }
    } else {
      const __m256i q = UnpackX86(w[b]);
      const __m256i u = Kernel::Format::kSigned ? _mm256_sign_epi8(q, q) : q;
      for (int i = 0; i < NA; ++i) {
        acc[i] = Kernel::Step(q, u, dw, t.act[i][b], t.scale[i][b], acc[i]);
        if (!Kernel::Format::kSigned) min_sum[i] += MinTerm<typename Kernel::Format>(w[b], t.act[i][b]);
      }
    }
  }
  for (int i = 0; i < NA; ++i) out[i] = HorizontalSum(acc[i]) + min_sum[i];
}

// Activation rows a0 .. a0+NA-1 against the weight rows of `a` (one ForEachMatMulTile tile:
// its 128 rows, 77 KiB of Q5_0 rows of 896, stay in L2 while the activation tiles' terms are
// decoded once for all of them).
template <class Kernel, int NA>
void RunDecodedTile(const MatMulArgs& a, int64_t a0) {
  const int64_t nb = a.n / 32;
  ActivationTerms<Kernel, NA, 256> t;
  const char* acts[NA];
  for (int i = 0; i < NA; ++i) acts[i] = static_cast<const char*>(a.act) + (a0 + i) * a.act_row_bytes;
  t.Fill(acts, nb);
  for (int64_t r = a.row_begin; r < a.row_end; ++r) {
    float out[NA];
    DotDecoded<Kernel, NA>(static_cast<const char*>(a.w) + r * a.w_row_bytes, t, nb, out);
    for (int i = 0; i < NA; ++i) a.y[(a0 + i) * a.y_stride + r] = out[i];
  }
}
#endif

// x86: mat_vec with the activation's terms decoded once per call, mat_mat with them decoded
// per tile of kActTile activation rows and kMatMulTileRows weight rows, both through
// DotDecoded; rows too long for the term tables and other targets through RunTiled and Dot.
// Every path gives a (row, activation) pair the same bits.
template <class Kernel>
void RunBlock32(const MatMulArgs& args) {
#if GGUFLOW_X86_256
  const int64_t nb = args.n / 32;
  if (args.n_act == 1 && nb <= 512) {
    ActivationTerms<Kernel, 1, 512> t;  // rows of up to 16384 elements
    const char* act = static_cast<const char*>(args.act);
    t.Fill(&act, nb);
    for (int64_t r = args.row_begin; r < args.row_end; ++r)
      DotDecoded<Kernel, 1>(static_cast<const char*>(args.w) + r * args.w_row_bytes, t, nb, args.y + r);
    return;
  }
  if (args.n_act > 1 && nb <= 256) {  // rows of up to 8192 elements: <= 4 x 36 KiB of terms
    ForEachMatMulTile<kActTile>(args, [](const MatMulArgs& rows, int64_t a0, auto na) {
      RunDecodedTile<Kernel, decltype(na)::value>(rows, a0);
    });
    return;
  }
#endif
  RunTiled<Kernel>(args);
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
