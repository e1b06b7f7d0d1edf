// Packed (row-interleaved) layout of Q4_0, Q5_0 and Q8_0 weights and its matrix kernels, x86 AVX2 and
// up (the ABI's pack / mat_vec_packed / mat_mat_packed; other targets offer no packed layout).
//
// Why: in the row-major layout a Q5_0 mat_vec spends ~18 vector instructions per 32-element
// block (nibble split, the 5th bit spread from 4 bytes to 32, a half-float scale converted and
// broadcast) and runs one accumulator chain per row; decode is then compute-bound at ~13 GB/s a
// core, well under the memory bandwidth. Packing 8 rows block by block lets one pass over an
// activation block feed 8 independent accumulators, converts the 8 scales with one instruction,
// and stores the bits so that each row's unpacking is a shift and a mask.
//
// Layout: groups of kGroupRows = 8 consecutive rows; within a group, block column b (elements
// 32b .. 32b+31 of all 8 rows) is stored as one record of 8 * sizeof(block) bytes:
//   d   [8] fp16        the 8 rows' block scales, row order                       (16 bytes)
//   qh  [32] u8         Q5_0 only: bit r of byte j = 5th bit of element j of row r (32 bytes)
//   qs  [4][32] u8      Q4_0, Q5_0: pair p: byte j = low 4 bits of element j of row 2p (low
//                       nibble) and of row 2p+1 (high nibble)                      (128 bytes)
//   qs  [8][32] i8      Q8_0: row r's 32 integers                                  (256 bytes)
// Q5_0: 176 bytes = 8 * 22; Q4_0: 144 = 8 * 18; Q8_0: 272 = 8 * 34. Groups follow each other,
// so the packed matrix has the row-major size and is read as one sequential stream.
//
// Results: each row's operations are those of the row-major kernel (kernels_block32.cc): per
// block the exact integer dot of (stored integers = q + offset) with the activation integers
// minus offset * the activation sum, times float(d_w) * float(d_a), fused into one 8-lane
// accumulator in block order, then the same horizontal sum. So packed and row-major results
// are equal bit for bit (tested), whatever the row range or the number of activation rows.
#include <cstring>

#include "plugins/kernels/kernels_internal.h"

namespace gguflow::kernels {
namespace {

constexpr int kGroupRows = 8;

// kOffset: the nibble formats store q + kOffset (unsigned); Q8_0 stores q itself (signed
// bytes, multiplied with the sign trick as in the row-major kernel).
struct PackedQ4_0 {
  using Block = block_q4_0;
  static constexpr bool kFifthBit = false;
  static constexpr int kOffset = 8;  // stored integers are q + 8 in [0, 16)
};
struct PackedQ5_0 {
  using Block = block_q5_0;
  static constexpr bool kFifthBit = true;
  static constexpr int kOffset = 16;  // stored integers are q + 16 in [0, 32)
};
struct PackedQ8_0 {
  using Block = block_q8_0;
  static constexpr bool kFifthBit = false;
  static constexpr int kOffset = 0;  // signed bytes
};

template <class Fmt>
struct PackedLayout {
  static constexpr size_t kColumnBytes = kGroupRows * sizeof(typename Fmt::Block);
  static constexpr size_t kScalesAt = 0;
  static constexpr size_t kHighBitsAt = 16;
  static constexpr size_t kNibblesAt = Fmt::kFifthBit ? 48 : 16;  // nibble formats
  static constexpr size_t kBytesAt = 16;                           // Q8_0: qs[8][32]
  static_assert((Fmt::kOffset > 0 ? kNibblesAt + 128 : kBytesAt + 256) == kColumnBytes,
                "packed record must keep the block bytes");
};

template <class Fmt>
void PackMatrix(const void* src, size_t w_row_bytes, int64_t n, int64_t n_rows, void* dst) {
  using L = PackedLayout<Fmt>;
  const int64_t nb = n / 32;
  for (int64_t g = 0; g * kGroupRows < n_rows; ++g) {
    const char* rows = static_cast<const char*>(src) + g * kGroupRows * w_row_bytes;
    uint8_t* group = static_cast<uint8_t*>(dst) + g * kGroupRows * w_row_bytes;
    for (int64_t b = 0; b < nb; ++b) {
      uint8_t* rec = group + b * L::kColumnBytes;
      std::memset(rec, 0, L::kColumnBytes);
      for (int r = 0; r < kGroupRows; ++r) {
        const auto& blk = reinterpret_cast<const typename Fmt::Block*>(rows + r * w_row_bytes)[b];
        std::memcpy(rec + L::kScalesAt + 2 * r, &blk.d, 2);
        if constexpr (Fmt::kOffset == 0) {
          std::memcpy(rec + L::kBytesAt + 32 * r, blk.qs, 32);
          continue;
        }
        // Element j < 16 is the low nibble of qs[j], element j + 16 its high nibble.
        uint8_t* nibbles = rec + L::kNibblesAt + (r / 2) * 32;
        const int shift = 4 * (r & 1);
        for (int j = 0; j < 16; ++j) {
          nibbles[j] |= static_cast<uint8_t>((blk.qs[j] & 0x0F) << shift);
          nibbles[j + 16] |= static_cast<uint8_t>((blk.qs[j] >> 4) << shift);
        }
        if constexpr (Fmt::kFifthBit) {
          uint32_t qh;  // bit j: 5th bit of element j
          std::memcpy(&qh, blk.qh, 4);
          uint8_t* high = rec + L::kHighBitsAt;
          for (int j = 0; j < 32; ++j) high[j] |= static_cast<uint8_t>(((qh >> j) & 1) << r);
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
  if constexpr (Fmt::kOffset == 0) {
    std::memcpy(blk.qs, rec + L::kBytesAt + 32 * r, 32);
  } else {
    const uint8_t* nibbles = rec + L::kNibblesAt + (r / 2) * 32;
    const int shift = 4 * (r & 1);
    for (int j = 0; j < 16; ++j)
      blk.qs[j] = static_cast<uint8_t>(((nibbles[j] >> shift) & 0x0F) |
                                       (((nibbles[j + 16] >> shift) & 0x0F) << 4));
    if constexpr (Fmt::kFifthBit) {
      uint32_t qh = 0;
      for (int j = 0; j < 32; ++j) qh |= static_cast<uint32_t>((rec[L::kHighBitsAt + j] >> r) & 1) << j;
      std::memcpy(blk.qh, &qh, 4);
    }
  }
  return blk;
}

template <class Fmt>
void DequantizePackedRowOf(uint32_t w_type, const void* w, size_t w_row_bytes, int64_t n,
                           int64_t row, float* dst) {
  using L = PackedLayout<Fmt>;
  const auto* group = static_cast<const uint8_t*>(w) + (row / kGroupRows) * kGroupRows * w_row_bytes;
  for (int64_t b = 0; b < n / 32; ++b) {
    const auto blk = UnpackRecordRow<Fmt>(group + b * L::kColumnBytes, static_cast<int>(row % kGroupRows));
    DequantizeRow(w_type, &blk, dst + 32 * b, 32);
  }
}

#if GGUFLOW_X86_256

// The activation side of block column b, shared by the 8 rows of a record: the activation
// integers, float(d_a), and the 8 lanes of offset * (sum of each 4 activation integers), the
// term the dot with the stored (offset) integers over-counts. Computed per record rather than
// kept in a per-call table: it costs ~5 instructions per 8 rows and keeps L1 for the weights.
template <class Fmt>
struct ActBlockTerms {
  __m256i ints, minus_sums;  // minus_sums: the correction, negated (it seeds the dot)
  float da;
  explicit ActBlockTerms(const block_q8_0& a)
      : ints(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.qs))),
        minus_sums(Fmt::kOffset > 0
                       ? _mm256_sub_epi32(_mm256_setzero_si256(),
                                          DotU8I8(_mm256_set1_epi8(static_cast<char>(Fmt::kOffset)), ints))
                       : _mm256_setzero_si256()),
        da(HalfToFloat(a.d)) {}
};

// Stored integers of row R of a record: its nibble, plus 16 where its 5th bit is set (Q5_0).
template <class Fmt, int R>
inline __m256i StoredIntegers(const uint8_t* rec, __m256i high_bits) {
  using L = PackedLayout<Fmt>;
  const __m256i pair = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rec + L::kNibblesAt + (R / 2) * 32));
  const __m256i low = _mm256_and_si256(R % 2 ? _mm256_srli_epi16(pair, 4) : pair, _mm256_set1_epi8(0x0F));
  if constexpr (!Fmt::kFifthBit) {
    (void)high_bits;
    return low;
  } else {
    // Bit R of each byte to bit 4 (16-bit shifts: a bit that crosses into the neighbour byte
    // never lands on that byte's bit 4), then keep bit 4.
    __m256i h = high_bits;
    if constexpr (R < 4) h = _mm256_slli_epi16(h, 4 - R);
    if constexpr (R > 4) h = _mm256_srli_epi16(h, R - 4);
    return _mm256_or_si256(low, _mm256_and_si256(h, _mm256_set1_epi8(0x10)));
  }
}

// One record's per-row inputs: the 5th-bit plane (Q5_0) and scales[r] = float(d_w of row r) *
// d_a, the 8 conversions in one instruction (each lane the same float product as the
// row-major kernel's scalar one).
template <class Fmt>
struct RecordTerms {
  __m256i high_bits;
  alignas(32) float scales[kGroupRows];
  RecordTerms(const uint8_t* rec, float da) {
    using L = PackedLayout<Fmt>;
    high_bits = Fmt::kFifthBit
        ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rec + L::kHighBitsAt))
        : _mm256_setzero_si256();
    const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rec + L::kScalesAt));
    _mm256_store_ps(scales, _mm256_mul_ps(_mm256_cvtph_ps(halves), _mm256_set1_ps(da)));
  }
};

// acc + (d_w * d_a) * float(exact block dot): the row-major kernel's step, for row R.
template <class Fmt, int R>
inline __m256 RowStep(const uint8_t* rec, const RecordTerms<Fmt>& t, const ActBlockTerms<Fmt>& a,
                      __m256 acc) {
  __m256i lanes;
  if constexpr (Fmt::kOffset > 0) {
    const __m256i u = StoredIntegers<Fmt, R>(rec, t.high_bits);
    lanes = DotU8I8Add(a.minus_sums, u, a.ints);  // dot - offset * sum, exact
  } else {
    // Signed weights: |q| as the unsigned operand, the activation takes q's sign.
    const __m256i q = _mm256_loadu_si256(
        reinterpret_cast<const __m256i*>(rec + PackedLayout<Fmt>::kBytesAt + 32 * R));
    lanes = DotU8I8(_mm256_sign_epi8(q, q), _mm256_sign_epi8(a.ints, q));
  }
  return _mm256_fmadd_ps(_mm256_broadcast_ss(t.scales + R), _mm256_cvtepi32_ps(lanes), acc);
}

// All 8 rows of a group: out[r] = dot(row r, act).
template <class Fmt>
void DotGroup(const uint8_t* group, int64_t nb, const block_q8_0* act, float out[kGroupRows]) {
  using L = PackedLayout<Fmt>;
  // Named locals, not an array: GCC keeps an array of vectors in memory across iterations.
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* rec = group + b * L::kColumnBytes;
    const ActBlockTerms<Fmt> a(act[b]);
    const RecordTerms<Fmt> t(rec, a.da);
    a0 = RowStep<Fmt, 0>(rec, t, a, a0);
    a1 = RowStep<Fmt, 1>(rec, t, a, a1);
    a2 = RowStep<Fmt, 2>(rec, t, a, a2);
    a3 = RowStep<Fmt, 3>(rec, t, a, a3);
    a4 = RowStep<Fmt, 4>(rec, t, a, a4);
    a5 = RowStep<Fmt, 5>(rec, t, a, a5);
    a6 = RowStep<Fmt, 6>(rec, t, a, a6);
    a7 = RowStep<Fmt, 7>(rec, t, a, a7);
  }
  const __m256 acc[kGroupRows] = {a0, a1, a2, a3, a4, a5, a6, a7};
  for (int r = 0; r < kGroupRows; ++r) out[r] = HorizontalSum(acc[r]);
}

// Row R of a group alone (row ranges that cut a group): the same per-row operations.
template <class Fmt, int R>
float DotRow(const uint8_t* group, int64_t nb, const block_q8_0* act) {
  using L = PackedLayout<Fmt>;
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* rec = group + b * L::kColumnBytes;
    const ActBlockTerms<Fmt> a(act[b]);
    acc = RowStep<Fmt, R>(rec, RecordTerms<Fmt>(rec, a.da), a, acc);
  }
  return HorizontalSum(acc);
}

template <class Fmt>
float DotRowOfGroup(int r, const uint8_t* group, int64_t nb, const block_q8_0* act) {
  switch (r) {
    case 0: return DotRow<Fmt, 0>(group, nb, act);
    case 1: return DotRow<Fmt, 1>(group, nb, act);
    case 2: return DotRow<Fmt, 2>(group, nb, act);
    case 3: return DotRow<Fmt, 3>(group, nb, act);
    case 4: return DotRow<Fmt, 4>(group, nb, act);
    case 5: return DotRow<Fmt, 5>(group, nb, act);
    case 6: return DotRow<Fmt, 6>(group, nb, act);
    default: return DotRow<Fmt, 7>(group, nb, act);
  }
}

// y[r] = dot(row r, act) for r in [row_begin, row_end), one activation row.
template <class Fmt>
void MatVecPacked(const void* w, size_t w_row_bytes, int64_t n, int64_t row_begin,
                  int64_t row_end, const void* act, float* y) {
  const int64_t nb = n / 32;
  const auto* act_blocks = static_cast<const block_q8_0*>(act);
  for (int64_t g = row_begin / kGroupRows; g * kGroupRows < row_end; ++g) {
    const uint8_t* group = static_cast<const uint8_t*>(w) + g * kGroupRows * w_row_bytes;
    const int64_t r0 = std::max(row_begin, g * kGroupRows);
    const int64_t r1 = std::min(row_end, (g + 1) * kGroupRows);
    if (r1 - r0 == kGroupRows) {
      DotGroup<Fmt>(group, nb, act_blocks, y + r0);
    } else {
      for (int64_t r = r0; r < r1; ++r)
        y[r] = DotRowOfGroup<Fmt>(static_cast<int>(r - g * kGroupRows), group, nb, act_blocks);
    }
  }
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

}  // namespace

uint32_t PackedGroupRows(uint32_t w_type) {
#if GGUFLOW_X86_256
  return WithPackedFormat(w_type, [](auto) {}) ? kGroupRows : 0;
#else
  (void)w_type;
  return 0;
#endif
}

void PackWeights(uint32_t w_type, const void* src, size_t w_row_bytes, int64_t n, int64_t n_rows,
                 void* dst) {
  WithPackedFormat(w_type, [&](auto fmt) {
    PackMatrix<decltype(fmt)>(src, w_row_bytes, n, n_rows, dst);
  });
}

void DequantizePackedRow(uint32_t w_type, const void* w, size_t w_row_bytes, int64_t n,
                         int64_t row, float* dst) {
  WithPackedFormat(w_type, [&](auto fmt) {
    DequantizePackedRowOf<decltype(fmt)>(w_type, w, w_row_bytes, n, row, dst);
  });
}

void MatMulPacked(uint32_t w_type, const MatMulArgs& a) {
#if GGUFLOW_X86_256
  WithPackedFormat(w_type, [&](auto fmt) {
    // Each activation row separately, so mat_mat equals n_act mat_vec calls by construction;
    // rows in tiles so that a tile's weights stay in cache while every activation row passes.
    constexpr int64_t kTileRows = 8 * kGroupRows;
    // Tile edges on multiples of kTileRows (so of the group), whatever row_begin is: a tile
    // edge inside a group would send all its rows down the one-row path.
    for (int64_t t0 = a.row_begin; t0 < a.row_end;) {
      const int64_t t1 = std::min(a.row_end, (t0 / kTileRows + 1) * kTileRows);
      for (int64_t i = 0; i < a.n_act; ++i)
        MatVecPacked<decltype(fmt)>(a.w, a.w_row_bytes, a.n, t0, t1,
                                    static_cast<const char*>(a.act) + i * a.act_row_bytes,
                                    a.y + i * a.y_stride);
      t0 = t1;
    }
  });
#else
  (void)w_type, (void)a;
#endif
}

}  // namespace gguflow::kernels
