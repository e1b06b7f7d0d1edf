// Row-major matrix products (the ABI's mat_vec / mat_mat on GGUF rows) through the packed
// kernels: each panel of a few 8-row groups is packed on the fly into a stack buffer and
// multiplied with every activation row by the packed kernels (kernels_packed*.cc).
//
// In use for Q4_K, Q6_K and the block-32 formats Q4_0, Q5_0, Q8_0.
//
// Float order of the block-32 formats: the packed kernels' (one lane per row, the block's
// exact integer dot, one fused add of d_w * d_a times it per block), not GGML's AVX2 order
// (8 lanes per row, each the dot of 4 elements, 8 fused adds per row, block and activation,
// hsum_float_8 at the end). GGML's order reproduced llama.cpp's Q8_0 logits bit for bit, but
// its float work is 8 times the packed kernels' and bounds prefill: an int8 dot of 32 products
// is one vpdpbusd lane group, the 8 conversions and fused adds after it cost more than it
// does (pp512 on the Qwen2.5-0.5B-shaped Q8_0 model: ~2.2x faster with the panels). The cost
// of the other order: last-place differences in a layer's output, which a Q8_0 model can turn
// into one activation rounded the other way; tests/exec/reference_logits_test.cc bounds the
// effect for these plugins (measured rel_rms 3.3e-3 on synth-qwen2-tiny-Q8_0, 0 on the
// stories260K Q8_0/Q4_0 files), and kernel_parity_test's
// Block32FollowsThePackedFloatOrderOnX86WithExtremeValues pins the order. The portable plugins
// (scalar, sse4) keep GGML's scalar order and the reference's bits.
//
// Panels: Q4_K and Q6_K in their packed layouts (PackWeights: byte copies). The block-32 formats
// in one layout, Q8_0's packed record (d[8] fp16, then register k of 8 rows: byte 4r+e = integer
// 4k+e of row r), with Q4_0 and Q5_0 unpacked to their stored integers q + 8 / q + 16, one byte
// each: a block unpacks with a few vector instructions and the 8 rows' blocks are transposed as
// an 8 x 8 matrix of 32-bit words, where PackWeights' Q5_0 five-plane layout costs ~10 scalar
// instructions per element (a quarter of a pp512 matrix product's time).
//
// Why: prefill runs before a session packs its weights (runtime/exec/packed_weights.h packs at
// the first decode step), so the prompt used the row-major kernels, which multiply one weight
// row by a tile of activations and spend a float convert, multiply and 8-lane fused add per
// (row, activation, block): the float side, not the integer dot, bounded prefill. The packed
// kernels do that float work once per 8 rows. Packing a panel costs about one pass over its
// bytes, paid once per call and shared by all n_act activation rows (pp64: 1/64 of the
// products; mat_vec pays it whole, see below).
//
// Packed Q4_0 / Q5_0 weights take the same panels in prefill (MatMulPackedViaPanels): a tile's
// groups unpacked once from the packed nibbles / five planes into panel records, then every
// activation row, where the packed kernel unpacked each record again for every 8 activation
// rows. ffn_up 4864 x 896 Q5_0, 512 activation rows, 1 thread, kernels_bench
// prefill512_packed: avx2 ~166 -> ~200 GFLOP/s; avx3_vnni ~300 -> ~305 (its unpacking was not
// what bounded it).
//
// Results: a row's bits are those of the packed kernels for that row and activation (each row
// in its own lane, exact integer block dots, one fused multiply-add per block in block order),
// whatever the row range, the panel or n_act. mat_vec takes this path too, so mat_mat still
// equals n_act mat_vec calls bit for bit; row-major and packed weights give the same bits (for
// the types in use). Cost: Q4_K/Q6_K row-major mat_vec packs every panel it reads; block-32
// rows go through MatVecBlock32 instead (~1.2-1.35x GGML's row-major kernel's time on the Q8_0
// lm-head). Decode runs on packed weights unless GGUFLOW_PACK_WEIGHTS=0.
//
// Only for the types with a packed layout on this target (PackedGroupRows > 0: x86 AVX2 and up)
// and rows short enough for one group to fit the panel buffer; everything else (and the scalar
// reference plugin) keeps the row-major kernels, decided by (type, n) alone so that mat_vec and
// mat_mat always take the same path.
#include <algorithm>
#include <cstring>

#include "plugins/kernels/kernels_internal.h"

namespace gguflow::kernels {
namespace {

constexpr int64_t kGroupRows = kPackedGroupRows;

// Stack bytes of one panel: 16 groups of Q8_0 rows of 896 (a slab that stays in L2 while every
// activation row passes), one group of Q8_0 rows up to ~15000 elements. Plugin calls run on
// oneTBB workers, whose stacks are 4 MiB; a call uses two such buffers (panel and scratch, or
// the block-32 unpacked columns).
constexpr size_t kPanelBytes = size_t{128} << 10;

// Groups per panel, 0 when one group does not fit (rows too long: the row-major kernels).
int64_t PanelGroups(size_t group_bytes) {
  return std::min<int64_t>(16, static_cast<int64_t>(kPanelBytes / group_bytes));
}

bool IsBlock32(uint32_t w_type) {
  return w_type == GGML_TYPE_Q4_0 || w_type == GGML_TYPE_Q5_0 || w_type == GGML_TYPE_Q8_0;
}

#if GGUFLOW_X86_256
constexpr size_t kBlock32RecordBytes = kGroupRows * sizeof(block_q8_0);  // 272

// The 32 stored integers of one block, element order (Q8_0: q; Q4_0: q + 8; Q5_0: q + 16).
inline __m256i StoredBytes(uint32_t w_type, const char* block) {
  switch (w_type) {
    case GGML_TYPE_Q4_0: return UnpackStoredX86(*reinterpret_cast<const block_q4_0*>(block));
    case GGML_TYPE_Q5_0: return UnpackStoredX86(*reinterpret_cast<const block_q5_0*>(block));
    default: return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(reinterpret_cast<const block_q8_0*>(block)->qs));
  }
}

// Rows are read one after the other, each front to back: reading the 8 rows of a group block by
// block (8 interleaved streams ~1 KiB apart) ran a row-major lm-head mat_vec at ~1/4 of the
// one-row-at-a-time kernel's speed on this VM, DRAM latency bound, prefetches or not.

// One block-32 group into panel records: rows[r] is row r's first block (nullptr: a zero row).
// Every block format starts with its fp16 d. `unpacked`: nb * 8 * 32 bytes of scratch.
void PackBlock32Group(uint32_t w_type, const char* const* rows, size_t block_bytes, int64_t nb, uint8_t* dst,
                      __m256i* unpacked) {
  for (int r = 0; r < kGroupRows; ++r) {  // unpacked[8b + r] = row r's stored integers of block b
    for (int64_t b = 0; b < nb; ++b) {
      const char* block = rows[r] ? rows[r] + b * block_bytes : nullptr;
      _mm256_store_si256(unpacked + 8 * b + r, block ? StoredBytes(w_type, block) : _mm256_setzero_si256());
      if (block) std::memcpy(dst + b * kBlock32RecordBytes + 2 * r, block, 2);
      else std::memset(dst + b * kBlock32RecordBytes + 2 * r, 0, 2);
    }
  }
  for (int64_t b = 0; b < nb; ++b) {
    uint8_t* rec = dst + b * kBlock32RecordBytes;
    const __m256i* v = unpacked + 8 * b;  // v[r] word k = integers 4k .. 4k+3 of row r
    // 8 x 8 transpose of 32-bit words: out[k] word r = v[r] word k.
    __m256i t[8], q[8];
    for (int j = 0; j < 4; ++j) {
      t[2 * j] = _mm256_unpacklo_epi32(v[2 * j], v[2 * j + 1]);      // words 0,1 | 4,5 of rows 2j, 2j+1
      t[2 * j + 1] = _mm256_unpackhi_epi32(v[2 * j], v[2 * j + 1]);  // words 2,3 | 6,7
    }
    for (int h = 0; h < 2; ++h) {  // rows 4h .. 4h+3
      q[4 * h + 0] = _mm256_unpacklo_epi64(t[4 * h], t[4 * h + 2]);      // word 0 | 4
      q[4 * h + 1] = _mm256_unpackhi_epi64(t[4 * h], t[4 * h + 2]);      // word 1 | 5
      q[4 * h + 2] = _mm256_unpacklo_epi64(t[4 * h + 1], t[4 * h + 3]);  // word 2 | 6
      q[4 * h + 3] = _mm256_unpackhi_epi64(t[4 * h + 1], t[4 * h + 3]);  // word 3 | 7
    }
    __m256i* out = reinterpret_cast<__m256i*>(rec + 16);
    for (int k = 0; k < 4; ++k) {
      _mm256_storeu_si256(out + k, _mm256_permute2x128_si256(q[k], q[4 + k], 0x20));
      _mm256_storeu_si256(out + k + 4, _mm256_permute2x128_si256(q[k], q[4 + k], 0x31));
    }
  }
}

// Row r's exact integer dot with activation block s, in 8 lanes: the signed weight integers by
// the sign trick (|q| times s with q's sign; |q| <= 128 keeps vpmaddubsw's pair sums exact).
template <uint32_t W>
inline __m256i RowBlockDot(const char* block, __m256i s) {
  __m256i q = StoredBytes(W, block);
  if constexpr (W == GGML_TYPE_Q4_0) q = _mm256_sub_epi8(q, _mm256_set1_epi8(8));
  if constexpr (W == GGML_TYPE_Q5_0) q = _mm256_sub_epi8(q, _mm256_set1_epi8(16));
  return DotU8I8(_mm256_sign_epi8(q, q), _mm256_sign_epi8(s, q));
}

// Lane r = the sum of v[r]'s 8 lanes.
inline __m256i SumLanesOf8(const __m256i* v) {
  const __m256i a01 = _mm256_hadd_epi32(v[0], v[1]), a23 = _mm256_hadd_epi32(v[2], v[3]);
  const __m256i a45 = _mm256_hadd_epi32(v[4], v[5]), a67 = _mm256_hadd_epi32(v[6], v[7]);
  const __m256i b0 = _mm256_hadd_epi32(a01, a23), b1 = _mm256_hadd_epi32(a45, a67);  // halves' sums
  return _mm256_add_epi32(_mm256_permute2x128_si256(b0, b1, 0x20), _mm256_permute2x128_si256(b0, b1, 0x31));
}

// Block-32 mat_vec on the GGUF rows with the panel kernels' bits, without a panel: a mat_vec
// reads each weight once (a prompt's lm-head: 136 MB of Q8_0 for Qwen2.5-0.5B), so packing
// would add a pass over the weights for nothing shared. Per group of 8 rows and block: each
// row's exact block dot, the 8 summed into one vector (lane r: row r, the lane of the packed
// layout), then MulPacked's float operations: float(d_w) * float(d_a) and one fused add.
template <uint32_t W>
void MatVecBlock32Of(const MatMulArgs& a) {
  const int64_t nb = a.n / 32;
  const size_t block_bytes = a.w_row_bytes / static_cast<size_t>(nb);
  const auto* act = static_cast<const block_q8_0*>(a.act);
  constexpr int64_t kMaxBlocks = 64;  // block columns per pass: 16 KiB of lanes, in L1
  alignas(32) __m256i dots[kMaxBlocks][kGroupRows];   // [block][row]: exact block dot in 8 lanes
  alignas(16) uint16_t d[kMaxBlocks][kGroupRows];     // [block][row]: fp16 d_w
  for (int64_t g = a.row_begin / kGroupRows; g * kGroupRows < a.row_end; ++g) {
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b0 = 0; b0 < nb; b0 += kMaxBlocks) {
      const int64_t b1 = std::min(nb, b0 + kMaxBlocks);
      for (int r = 0; r < kGroupRows; ++r) {
        const int64_t row = g * kGroupRows + r;
        const bool in_range = row >= a.row_begin && row < a.row_end;
        const char* w = static_cast<const char*>(a.w) + row * a.w_row_bytes;
        for (int64_t b = b0; b < b1; ++b) {
          if (in_range) {
            dots[b - b0][r] = RowBlockDot<W>(w + b * block_bytes,
                                          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act[b].qs)));
            std::memcpy(&d[b - b0][r], w + b * block_bytes, 2);
          } else {
            dots[b - b0][r] = _mm256_setzero_si256();
            d[b - b0][r] = 0;
          }
        }
      }
      for (int64_t b = b0; b < b1; ++b) {
        const __m256 w_scales = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(d[b - b0])));
        const __m256 scales = _mm256_mul_ps(w_scales, _mm256_set1_ps(HalfToFloat(act[b].d)));
        const __m256i sums = SumLanesOf8(dots[b - b0]);
        acc = _mm256_fmadd_ps(scales, _mm256_cvtepi32_ps(sums), acc);
      }
    }
    StorePackedGroup(acc, g, a.row_begin, a.row_end, a.y);
  }
}

void MatVecBlock32(uint32_t w_type, const MatMulArgs& a) {
  switch (w_type) {
    case GGML_TYPE_Q4_0: return MatVecBlock32Of<GGML_TYPE_Q4_0>(a);
    case GGML_TYPE_Q5_0: return MatVecBlock32Of<GGML_TYPE_Q5_0>(a);
    default: return MatVecBlock32Of<GGML_TYPE_Q8_0>(a);
  }
}
#endif

// Packs groups [g0, g1) of the row-major matrix w, limited to rows [row_begin, row_end), into
// `panel` (group g at (g - g0) * 8 * w_row_bytes). Rows of a group outside the range are read as
// zero blocks: they may lie outside the matrix, and their results are never stored.
void PackPanel(uint32_t w_type, const MatMulArgs& a, int64_t g0, int64_t g1, uint8_t* panel,
               uint8_t* scratch) {
  const size_t group_bytes = kGroupRows * a.w_row_bytes;
  for (int64_t g = g0; g < g1; ++g) {
    const int64_t r0 = std::max(a.row_begin, g * kGroupRows), r1 = std::min(a.row_end, (g + 1) * kGroupRows);
    const char* src = static_cast<const char*>(a.w) + g * group_bytes;
    if (r1 - r0 < kGroupRows) {  // a group cut by the range: copy its rows beside zero rows
      std::memset(scratch, 0, group_bytes);
      std::memcpy(scratch + (r0 - g * kGroupRows) * a.w_row_bytes, static_cast<const char*>(a.w) + r0 * a.w_row_bytes,
                  static_cast<size_t>(r1 - r0) * a.w_row_bytes);
      src = reinterpret_cast<const char*>(scratch);
    }
#if GGUFLOW_X86_256
    // The next group's rows into L2 while this one packs (PackWeights reads 8 rows block by
    // block, interleaved streams the hardware prefetchers do not follow well; see PackBlock32Group).
    const int64_t next0 = std::max(a.row_begin, (g + 1) * kGroupRows), next1 = std::min(a.row_end, (g + 2) * kGroupRows);
    const char* next = static_cast<const char*>(a.w) + next0 * a.w_row_bytes;
    for (size_t off = 0; next1 > next0 && off < static_cast<size_t>(next1 - next0) * a.w_row_bytes; off += 64)
      _mm_prefetch(next + off, _MM_HINT_T1);
#endif
    PackWeights(w_type, src, a.w_row_bytes, a.n, kGroupRows, panel + (g - g0) * group_bytes);
  }
}

#if GGUFLOW_X86_256
// Block-32 formats: panels of the layout above, multiplied by MatMulPanelBlock32, the panel's
// groups written by fill_group(g, dst) (group g of the matrix into dst, nb records). False when
// one group does not fit a panel.
template <class FillGroup>
bool MulBlock32Panels(uint32_t w_type, const MatMulArgs& args, FillGroup&& fill_group) {
  const int64_t nb = args.n / 32;
  const size_t group_bytes = static_cast<size_t>(nb) * kBlock32RecordBytes;
  const int64_t groups = PanelGroups(group_bytes);
  if (groups < 1) return false;
  alignas(64) uint8_t panel[kPanelBytes];  // [groups][nb records of 272 bytes]
  for (int64_t g0 = args.row_begin / kGroupRows; g0 * kGroupRows < args.row_end; g0 += groups) {
    const int64_t g1 = std::min(g0 + groups, (args.row_end + kGroupRows - 1) / kGroupRows);
    for (int64_t g = g0; g < g1; ++g) fill_group(g, panel + (g - g0) * group_bytes);
    MatMulArgs p = args;
    p.w = panel;
    p.w_row_bytes = static_cast<size_t>(nb) * sizeof(block_q8_0);  // group g at 8 * g * this
    p.row_begin = std::max(args.row_begin, g0 * kGroupRows) - g0 * kGroupRows;
    p.row_end = std::min(args.row_end, g1 * kGroupRows) - g0 * kGroupRows;
    p.y = args.y + g0 * kGroupRows;
    p.prefetch_row_end = p.row_begin;  // the panel is in L2
    MatMulPanelBlock32(w_type, p);
  }
  return true;
}
#endif

// Row-major block-32 weights: each group packed from its GGUF rows (PackBlock32Group).
bool MatMulViaBlock32Panels(uint32_t w_type, const MatMulArgs& args) {
#if GGUFLOW_X86_256
  const int64_t nb = args.n / 32;
  if (PanelGroups(static_cast<size_t>(nb) * kBlock32RecordBytes) < 1) return false;
  if (args.n_act == 1) {
    MatVecBlock32(w_type, args);
    return true;
  }
  // One group's blocks unpacked, [nb][8 rows]: 256 bytes a block column, <= kPanelBytes since a
  // group's records (272 bytes a column) fit the panel.
  alignas(64) __m256i unpacked[kPanelBytes / sizeof(__m256i)];
  const size_t block_bytes = args.w_row_bytes / static_cast<size_t>(nb);
  return MulBlock32Panels(w_type, args, [&](int64_t g, uint8_t* dst) {
    const char* rows[kGroupRows];
    for (int r = 0; r < kGroupRows; ++r) {
      const int64_t row = g * kGroupRows + r;
      rows[r] = row >= args.row_begin && row < args.row_end ? static_cast<const char*>(args.w) + row * args.w_row_bytes
                                                            : nullptr;
    }
    PackBlock32Group(w_type, rows, block_bytes, nb, dst, unpacked);
  });
#else
  (void)w_type, (void)args;
  return false;
#endif
}

}  // namespace

bool MatMulPackedViaPanels(uint32_t w_type, const MatMulArgs& args) {
#if GGUFLOW_X86_256
  if (w_type != GGML_TYPE_Q4_0 && w_type != GGML_TYPE_Q5_0) return false;
  const int64_t nb = args.n / 32;
  return MulBlock32Panels(w_type, args, [&](int64_t g, uint8_t* dst) {
    UnpackPackedGroupToPanel(w_type, PackedGroupAt(args.w, args.w_row_bytes, g), nb, dst);
  });
#else
  (void)w_type, (void)args;
  return false;
#endif
}

bool MatMulViaPanels(uint32_t w_type, const MatMulArgs& args) {
  if (PackedGroupRows(w_type) != kGroupRows) return false;
  if (IsBlock32(w_type)) return MatMulViaBlock32Panels(w_type, args);
  const int64_t groups = PanelGroups(kGroupRows * args.w_row_bytes);
  if (groups < 1) return false;
  alignas(64) uint8_t panel[kPanelBytes];    // [groups][8 rows] packed, row bytes as GGUF
  alignas(64) uint8_t scratch[kPanelBytes];  // one cut group, row-major (groups >= 1: it fits)
  for (int64_t g0 = args.row_begin / kGroupRows; g0 * kGroupRows < args.row_end; g0 += groups) {
    const int64_t g1 = std::min(g0 + groups, (args.row_end + kGroupRows - 1) / kGroupRows);
    PackPanel(w_type, args, g0, g1, panel, scratch);
    // The panel as a packed matrix whose row 0 is row 8 * g0; y shifted to match.
    MatMulArgs p = args;
    p.w = panel;
    p.row_begin = std::max(args.row_begin, g0 * kGroupRows) - g0 * kGroupRows;
    p.row_end = std::min(args.row_end, g1 * kGroupRows) - g0 * kGroupRows;
    p.y = args.y + g0 * kGroupRows;
    p.prefetch_row_end = p.row_begin;  // the panel is in L2
    MatMulPacked(w_type, p);
  }
  return true;
}

}  // namespace gguflow::kernels
