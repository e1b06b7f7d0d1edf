// Parity of every plugin this CPU can run with the scalar reference (runtime/quant), for every
// weight type the ABI lists.
//
// Reference: weights quantized and dequantized by runtime/quant; activations quantized by the
// plugin (and checked bit-exact against runtime/quant's quantizer for the activation type),
// dequantized by runtime/quant; the dot product in double. What remains between kernel and
// reference is float rounding only, because both use the same quantized activations.
//
// Tolerance: the kernel's integer dot per block is exact; each block adds one rounded product
// (d_w * d_a rounded, times the integer sum rounded) and the row sum is rounded once per
// block (or per element for float types). Every rounding is at most 2^-24 relative to a term
// whose magnitude is bounded by sum_k |a_k| * 3 * max|w| over k's block (3: for formats with a
// min, d*sc*q and dmin*m are each at most about twice the block's largest |value|). So
//   |kernel - reference| <= (terms + 8) * 2^-24 * 3 * sum_k |a_k| max_block|w|
// with terms = blocks (elements for float types) per row. Q8_1 activations (for Q4_1/Q5_1) add
// one term from the activation quantization itself: GGML multiplies the weight min m by the
// stored s = fp16(d * sum(q)), not by the exact d * sum(q); |m| <= max|w| of the block, so
//   + sum_blocks max_block|w| * |s - d * sum(q)|       (computed exactly from the activation).
// A single wrongly decoded element costs about |w_k a_k| ~ magnitude / n, far above the bound.
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plugins/abi/quant_blocks.h"
#include "runtime/quant/quant.h"
#include "tests/plugins/plugin_test_util.h"

namespace gguflow::test {
namespace {

struct TypeCase {
  uint32_t type;
  int64_t n;  // elements per row: odd for float types, not a multiple of 256 for 32-blocks
};

const TypeCase kTypes[] = {
    {GGML_TYPE_F32, 37},   {GGML_TYPE_F16, 37},   {GGML_TYPE_BF16, 37},  {GGML_TYPE_Q4_0, 96},
    {GGML_TYPE_Q4_1, 96},  {GGML_TYPE_Q5_0, 96},  {GGML_TYPE_Q5_1, 96},  {GGML_TYPE_Q8_0, 96},
    {GGML_TYPE_Q2_K, 512}, {GGML_TYPE_Q3_K, 512}, {GGML_TYPE_Q4_K, 512}, {GGML_TYPE_Q5_K, 512},
    {GGML_TYPE_Q6_K, 512},
};

// Half the spacing of fp16 values at |v| (2^-25 below the normal range): a rounding's bound.
double fp16_half_ulp(double v) {
  const double a = std::fabs(v);
  if (a < std::ldexp(1.0, -14)) return std::ldexp(1.0, -25);
  return std::ldexp(1.0, std::ilogb(a) - 11);
}

constexpr int64_t kRows = 13;   // odd, not a multiple of any row tile
constexpr int64_t kActs = 17;   // batch sizes 1..17
constexpr int64_t kYStride = kRows + 3;

// Gaussian rows with a magnitude per row from 1e-3 to 1e3; `zero_row` is all zeros and one
// element of row 1 is a 100x outlier.
std::vector<float> make_rows(int64_t rows, int64_t n, uint32_t seed, int64_t zero_row) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r) {
    const float scale = std::pow(10.0f, static_cast<float>(r % 7) - 3.0f);
    for (int64_t k = 0; k < n; ++k) x[r * n + k] = r == zero_row ? 0.0f : scale * normal(rng);
  }
  if (rows > 1) x[1 * n + n / 3] *= 100.0f;
  return x;
}

struct Problem {
  uint32_t type, act_type;
  int64_t n, block;
  size_t w_row_bytes, act_row_bytes;
  std::vector<uint8_t> w, act;           // quantized weights [kRows] and activations [kActs]
  std::vector<double> ref, tol;          // [kActs][kRows]
};

// active_block >= 0: the activations are zero outside that weight block, so the tolerance (which
// grows with the row's length) covers only it, and a wrongly decoded element of that block of
// a long row shows (over a whole row of 97 super-blocks it could hide in the bound).
Problem make_problem(const GguflowKernels& k, const TypeCase& tc, int64_t active_block = -1) {
  Problem p;
  p.type = tc.type;
  p.act_type = k.act_type[tc.type];
  p.n = tc.n;
  p.block = ggml_type_info(tc.type)->block_size;
  p.w_row_bytes = row_bytes(tc.type, tc.n);
  p.act_row_bytes = row_bytes(p.act_type, tc.n);

  auto af = make_rows(kActs, tc.n, 99 + tc.type, 3);
  if (active_block >= 0) {
    const int64_t block = ggml_type_info(tc.type)->block_size;
    for (int64_t a = 0; a < kActs; ++a)
      for (int64_t i = 0; i < tc.n; ++i)
        if (i / block != active_block) af[a * tc.n + i] = 0.0f;
  }
  p.act.resize(kActs * p.act_row_bytes);
  std::vector<float> ad(kActs * tc.n);
  // The weights depend on (type, n) only: quantized once for all the calls that share them
  // (the k-quants' reference quantizers search scales, the slow part of a long-row problem).
  struct Weights {
    std::vector<uint8_t> quantized;
    std::vector<float> decoded;
  };
  static std::map<std::pair<uint32_t, int64_t>, Weights> cache;
  Weights& weights = cache[{tc.type, tc.n}];
  if (weights.quantized.empty()) {
    const auto wf = make_rows(kRows, tc.n, 1234 + tc.type, 0);
    weights.quantized.resize(kRows * p.w_row_bytes);
    weights.decoded.resize(kRows * tc.n);
    for (int64_t r = 0; r < kRows; ++r) {
      quantize_row(tc.type, &wf[r * tc.n], &weights.quantized[r * p.w_row_bytes], tc.n);
      dequantize_row(tc.type, &weights.quantized[r * p.w_row_bytes], &weights.decoded[r * tc.n], tc.n);
    }
  }
  p.w = weights.quantized;
  const std::vector<float>& wd = weights.decoded;
  std::vector<uint8_t> expected_act(p.act_row_bytes);
  for (int64_t a = 0; a < kActs; ++a) {
    k.quantize_act(p.act_type, &af[a * tc.n], &p.act[a * p.act_row_bytes], tc.n);
    quantize_row(p.act_type, &af[a * tc.n], expected_act.data(), tc.n);
    EXPECT_EQ(0, std::memcmp(expected_act.data(), &p.act[a * p.act_row_bytes], p.act_row_bytes))
        << "quantize_act(" << ggml_type_info(p.act_type)->name << ") differs from runtime/quant, row " << a;
    dequantize_row(p.act_type, &p.act[a * p.act_row_bytes], &ad[a * tc.n], tc.n);
  }

  const int64_t terms = p.block == 1 ? tc.n : tc.n / p.block;
  p.ref.resize(kActs * kRows);
  p.tol.resize(kActs * kRows);
  for (int64_t a = 0; a < kActs; ++a) {
    for (int64_t r = 0; r < kRows; ++r) {
      double dot = 0.0, magnitude = 0.0;
      double s_rounding = 0.0;
      // Only the active block contributes when there is one (the others' activations are 0).
      const int64_t first = active_block >= 0 ? active_block * p.block : 0;
      const int64_t end = active_block >= 0 ? first + p.block : tc.n;
      for (int64_t b0 = first; b0 < end; b0 += p.block) {
        double block_max = 0.0;
        for (int64_t k2 = b0; k2 < b0 + p.block; ++k2) block_max = std::max(block_max, std::fabs(double(wd[r * tc.n + k2])));
        if (p.act_type == GGML_TYPE_Q8_1) {
          const auto& ab = reinterpret_cast<const block_q8_1*>(&p.act[a * p.act_row_bytes])[b0 / 32];
          double sum_q = 0.0;
          for (int8_t q : ab.qs) sum_q += q;
          const double exact_s = double(gguflow_fp16_to_f32(ab.d)) * sum_q;
          // s is fp16(sum(q) * d) from the float d (GGML's quantize_row_q8_1_ref), while
          // exact_s uses the stored fp16 d: they differ by |sum| times d's rounding plus s's own.
          // Checked here, so that the term s adds to the tolerance below cannot grow with a
          // wrong s.
          const double d16 = gguflow_fp16_to_f32(ab.d);
          EXPECT_LE(std::fabs(double(gguflow_fp16_to_f32(ab.s)) - exact_s),
                    std::fabs(sum_q) * fp16_half_ulp(d16) + fp16_half_ulp(exact_s) * 1.01)
              << "block_q8_1.s is not d * sum(q), block " << b0 / 32;
          s_rounding += block_max * std::fabs(double(gguflow_fp16_to_f32(ab.s)) - exact_s);
        }
        for (int64_t k2 = b0; k2 < b0 + p.block; ++k2) {
          dot += double(wd[r * tc.n + k2]) * double(ad[a * tc.n + k2]);
          magnitude += std::fabs(double(ad[a * tc.n + k2])) * 3.0 * block_max;
        }
      }
      p.ref[a * kRows + r] = dot;
      p.tol[a * kRows + r] = double(terms + 8) * std::ldexp(1.0, -24) * magnitude + s_rounding;
    }
  }
  return p;
}

class KernelParity : public ::testing::TestWithParam<std::string> {};

// A type a plugin starts to advertise is checked too: the plugin's types are kTypes exactly.
TEST_P(KernelParity, ThePluginsTypesAreTheTestedTypes) {
  const GguflowKernels& k = plugin_table(GetParam());
  for (uint32_t t = 0; t < GGML_TYPE_COUNT; ++t) {
    const bool tested = std::any_of(std::begin(kTypes), std::end(kTypes), [&](const TypeCase& c) { return c.type == t; });
    if (ggml_type_info(t) == nullptr) continue;
    EXPECT_EQ(k.act_type[t] != GGML_TYPE_COUNT, tested)
        << ggml_type_info(t)->name << (tested ? ": tested but the plugin has no kernel for it"
                                              : ": the plugin has a kernel no parity test checks (add it to kTypes)");
  }
}

TEST_P(KernelParity, MatVecAndMatMatMatchReferenceForEveryType) {
  const GguflowKernels& k = plugin_table(GetParam());
  for (const TypeCase& tc : kTypes) {
    SCOPED_TRACE(ggml_type_info(tc.type)->name);
    ASSERT_NE(k.act_type[tc.type], GGML_TYPE_COUNT) << "plugin lacks a kernel for this type";
    const Problem p = make_problem(k, tc);

    // Decode: one mat_vec per activation row, all rows at once.
    std::vector<float> y_vec(kActs * kRows);
    for (int64_t a = 0; a < kActs; ++a)
      k.mat_vec(p.type, p.w.data(), p.w_row_bytes, p.n, 0, kRows, &p.act[a * p.act_row_bytes], &y_vec[a * kRows]);
    for (int64_t a = 0; a < kActs; ++a)
      for (int64_t r = 0; r < kRows; ++r)
        ASSERT_NEAR(y_vec[a * kRows + r], p.ref[a * kRows + r], p.tol[a * kRows + r])
            << "mat_vec act " << a << " row " << r;

    // Prefill: every batch size 1..17 equals the mat_vec results bit for bit.
    for (int64_t batch = 1; batch <= kActs; ++batch) {
      std::vector<float> y(batch * kYStride, -1.0f);
      k.mat_mat(p.type, p.w.data(), p.w_row_bytes, p.n, 0, kRows, p.act.data(), p.act_row_bytes, batch, y.data(), kYStride);
      for (int64_t a = 0; a < batch; ++a) {
        ASSERT_EQ(0, std::memcmp(&y[a * kYStride], &y_vec[a * kRows], kRows * sizeof(float)))
            << "mat_mat batch " << batch << " act " << a << " differs from mat_vec";
        for (int64_t r = kRows; r < kYStride; ++r) ASSERT_EQ(y[a * kYStride + r], -1.0f) << "wrote past the rows";
      }
    }
  }
}

TEST_P(KernelParity, ResultsDoNotDependOnRowSplit) {
  const GguflowKernels& k = plugin_table(GetParam());
  for (const TypeCase& tc : kTypes) {
    SCOPED_TRACE(ggml_type_info(tc.type)->name);
    const Problem p = make_problem(k, tc);
    constexpr int64_t kBatch = 6;
    std::vector<float> whole(kBatch * kRows), split(kBatch * kRows, -7.0f);
    k.mat_mat(p.type, p.w.data(), p.w_row_bytes, p.n, 0, kRows, p.act.data(), p.act_row_bytes, kBatch, whole.data(), kRows);
    // Three ranges of uneven sizes, computed out of order.
    const int64_t cuts[][2] = {{9, kRows}, {0, 1}, {1, 9}};
    for (const auto& c : cuts)
      k.mat_mat(p.type, p.w.data(), p.w_row_bytes, p.n, c[0], c[1], p.act.data(), p.act_row_bytes, kBatch, split.data(), kRows);
    EXPECT_EQ(0, std::memcmp(whole.data(), split.data(), whole.size() * sizeof(float)));
    // Decode split at every row boundary gives the same bits as well.
    std::vector<float> one(kRows), pieces(kRows);
    k.mat_vec(p.type, p.w.data(), p.w_row_bytes, p.n, 0, kRows, p.act.data(), one.data());
    for (int64_t r = 0; r < kRows; ++r)
      k.mat_vec(p.type, p.w.data(), p.w_row_bytes, p.n, r, r + 1, p.act.data(), pieces.data());
    EXPECT_EQ(0, std::memcmp(one.data(), pieces.data(), kRows * sizeof(float)));
  }
}

// k-quant rows of 50 super-blocks (the x86 mat_mat decodes one row per tile) and of 97 (longer
// than its decode buffer: the direct path): mat_vec within tolerance, mat_mat bit-equal to it.
TEST_P(KernelParity, KQuantLongRowsMatchReferenceInBothMatMatPaths) {
  const GguflowKernels& k = plugin_table(GetParam());
  for (uint32_t type : {GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K}) {
    for (int64_t blocks : {50, 97}) {
      const TypeCase tc{type, 256 * blocks};
      SCOPED_TRACE(std::string(ggml_type_info(type)->name) + " n=" + std::to_string(tc.n));
      const Problem p = make_problem(k, tc);
      std::vector<float> y_vec(kActs * kRows), y(kActs * kRows);
      for (int64_t a = 0; a < kActs; ++a)
        k.mat_vec(p.type, p.w.data(), p.w_row_bytes, p.n, 0, kRows, &p.act[a * p.act_row_bytes], &y_vec[a * kRows]);
      for (int64_t i = 0; i < kActs * kRows; ++i) ASSERT_NEAR(y_vec[i], p.ref[i], p.tol[i]) << "mat_vec, output " << i;
      k.mat_mat(p.type, p.w.data(), p.w_row_bytes, p.n, 0, kRows, p.act.data(), p.act_row_bytes, kActs, y.data(), kRows);
      EXPECT_EQ(0, std::memcmp(y.data(), y_vec.data(), y.size() * sizeof(float))) << "mat_mat differs from mat_vec";
    }
  }
}

// Long rows one block at a time (every 16th block and the last): each block's decoding is held
// to a tolerance of that block alone, not one that grows with the whole row.
TEST_P(KernelParity, LongRowsMatchReferenceBlockByBlock) {
  const GguflowKernels& k = plugin_table(GetParam());
  const TypeCase long_rows[] = {{GGML_TYPE_Q4_0, 4864}, {GGML_TYPE_Q5_0, 4864}, {GGML_TYPE_Q8_0, 4864},
                                {GGML_TYPE_Q2_K, 256 * 97}, {GGML_TYPE_Q3_K, 256 * 97}, {GGML_TYPE_Q4_K, 256 * 97},
                                {GGML_TYPE_Q5_K, 256 * 97}, {GGML_TYPE_Q6_K, 256 * 97}};
  for (const TypeCase& tc : long_rows) {
    const int64_t blocks = tc.n / ggml_type_info(tc.type)->block_size;
    for (int64_t b = 0; b < blocks; b = b + 16 < blocks ? b + 16 : (b == blocks - 1 ? blocks : blocks - 1)) {
      SCOPED_TRACE(std::string(ggml_type_info(tc.type)->name) + " n=" + std::to_string(tc.n) + " block " + std::to_string(b));
      const Problem p = make_problem(k, tc, b);
      std::vector<float> y(kActs * kRows);
      k.mat_mat(p.type, p.w.data(), p.w_row_bytes, p.n, 0, kRows, p.act.data(), p.act_row_bytes, kActs, y.data(), kRows);
      for (int64_t i = 0; i < kActs * kRows; ++i) ASSERT_NEAR(y[i], p.ref[i], p.tol[i]) << "output " << i;
    }
  }
}

TEST_P(KernelParity, ZeroRowsAndZeroActivationsGiveExactZero) {
  const GguflowKernels& k = plugin_table(GetParam());
  for (const TypeCase& tc : kTypes) {
    SCOPED_TRACE(ggml_type_info(tc.type)->name);
    const Problem p = make_problem(k, tc);
    std::vector<float> y(kActs * kRows);
    k.mat_mat(p.type, p.w.data(), p.w_row_bytes, p.n, 0, kRows, p.act.data(), p.act_row_bytes, kActs, y.data(), kRows);
    for (int64_t a = 0; a < kActs; ++a) EXPECT_EQ(y[a * kRows + 0], 0.0f) << "zero weight row, act " << a;
    for (int64_t r = 0; r < kRows; ++r) EXPECT_EQ(y[3 * kRows + r], 0.0f) << "zero activation row, row " << r;
    // An empty row range writes nothing.
    std::vector<float> untouched(kRows, 5.0f);
    k.mat_vec(p.type, p.w.data(), p.w_row_bytes, p.n, 4, 4, p.act.data(), untouched.data());
    for (float v : untouched) EXPECT_EQ(v, 5.0f);
  }
}

TEST_P(KernelParity, DequantizeRowMatchesReference) {
  const GguflowKernels& k = plugin_table(GetParam());
  for (const TypeCase& tc : kTypes) {
    SCOPED_TRACE(ggml_type_info(tc.type)->name);
    const Problem p = make_problem(k, tc);
    std::vector<float> mine(tc.n), ref(tc.n);
    for (int64_t r = 0; r < kRows; ++r) {
      k.dequantize_row(p.type, &p.w[r * p.w_row_bytes], mine.data(), tc.n);
      dequantize_row(p.type, &p.w[r * p.w_row_bytes], ref.data(), tc.n);
      ASSERT_EQ(0, std::memcmp(mine.data(), ref.data(), tc.n * sizeof(float))) << "row " << r;
    }
  }
}

// The float order of the block-32 formats against Q8_0 activations (Q4_0, Q5_0, Q8_0) on the
// x86 plugins (AVX2 and up), pinned so that a change of order is a decision, not an accident:
// a (row, activation) pair is the packed kernels' computation (kernels_packed.cc), which
// prefill and decode share through the panels of kernels_panels.cc: per block the exact
// integer dot of the 32 products, then acc = fma(float(d_w) * float(d_a), float(dot), acc) in
// block order, one float lane per row. (Until 2026-12-02 the row-major kernels followed GGML's
// AVX2 order instead, 8 lanes per row and hsum_float_8 at the end, which reproduced llama.cpp's
// Q8_0 logits bit for bit but costs 8 fused adds per row, block and activation: see
// kernels_panels.cc for why the packed order won.) A last-place difference in a layer's output
// can move a later Q8_0 activation across a rounding half, so a silent change of order shows as
// a jump in tests/exec's reference-logit errors; this test names the kernel instead. Weights and
// activations at the extremes (|q| = 127 in many lanes, both signs; Q4_0/Q5_0 at both ends of
// their range), so that a saturating 16-bit pair sum or a wrong offset correction shows as well.
template <class Fill>
void extreme_block(std::mt19937& rng, int8_t q[32], Fill fill) {
  for (int j = 0; j < 32; ++j) {
    const uint32_t r = rng() % 4;
    q[j] = static_cast<int8_t>(r == 0 ? fill(true, rng) : r == 1 ? -fill(true, rng) : fill(false, rng));
  }
}

// Block b's integer weights (element order) of a Q4_0, Q5_0 or Q8_0 row.
void weight_integers(uint32_t type, const uint8_t* row, int64_t b, int8_t q[32]) {
  if (type == GGML_TYPE_Q8_0) {
    std::memcpy(q, reinterpret_cast<const block_q8_0*>(row)[b].qs, 32);
    return;
  }
  const bool five = type == GGML_TYPE_Q5_0;
  const uint8_t* qs = five ? reinterpret_cast<const block_q5_0*>(row)[b].qs : reinterpret_cast<const block_q4_0*>(row)[b].qs;
  uint32_t qh = 0;
  if (five) std::memcpy(&qh, reinterpret_cast<const block_q5_0*>(row)[b].qh, 4);
  for (int j = 0; j < 16; ++j) {
    int lo = qs[j] & 0x0F, hi = qs[j] >> 4;
    if (five) lo |= ((qh >> j) & 1) << 4, hi |= ((qh >> (j + 16)) & 1) << 4;
    q[j] = static_cast<int8_t>(lo - (five ? 16 : 8));
    q[j + 16] = static_cast<int8_t>(hi - (five ? 16 : 8));
  }
}

TEST_P(KernelParity, Block32FollowsThePackedFloatOrderOnX86WithExtremeValues) {
  const GguflowKernels& k = plugin_table(GetParam());
  const std::string target = k.target_name;
  if (target != "AVX2" && target != "AVX3" && target != "AVX3_DL")
    GTEST_SKIP() << target << ": the portable kernels add one term per block in GGML's scalar order (no fma)";
  constexpr int64_t kN = 384, kNb = kN / 32, kWRows = 40, kNAct = 19;  // rows: 5 groups of 8
  std::mt19937 rng(20261202);
  std::uniform_real_distribution<float> scale(1e-3f, 2e-2f);
  const auto fp16 = [&](bool negative_ok) {
    const float d = scale(rng);
    return gguflow_f32_to_fp16(negative_ok && rng() % 4 == 0 ? -d : d);
  };
  // Activations: Q8_0 as the quantizer makes them (|q| <= 127), many lanes at +-127.
  std::vector<block_q8_0> act(kNAct * kNb);
  for (auto& blk : act) {
    blk.d = fp16(false);
    extreme_block(rng, blk.qs, [](bool extreme, std::mt19937& g) { return extreme ? 127 : static_cast<int>(g() % 255) - 127; });
  }
  for (uint32_t type : {GGML_TYPE_Q8_0, GGML_TYPE_Q4_0, GGML_TYPE_Q5_0}) {
    SCOPED_TRACE(ggml_type_info(type)->name);
    const size_t w_row_bytes = row_bytes(type, kN);
    std::vector<uint8_t> w(kWRows * w_row_bytes);
    for (int64_t r = 0; r < kWRows; ++r) {
      for (int64_t b = 0; b < kNb; ++b) {
        uint8_t* blk = &w[r * w_row_bytes + b * (w_row_bytes / kNb)];
        const gguflow_fp16_t d = fp16(true);
        std::memcpy(blk, &d, 2);
        if (type == GGML_TYPE_Q8_0) {
          extreme_block(rng, reinterpret_cast<block_q8_0*>(blk)->qs,
                        [](bool extreme, std::mt19937& g) { return extreme ? 127 : static_cast<int>(g() % 255) - 127; });
        } else {
          // Stored nibbles (and fifth bits) at 0 or the top of their range in most elements.
          for (size_t i = 2; i < w_row_bytes / kNb; ++i) {
            const uint32_t v = rng();
            blk[i] = static_cast<uint8_t>(v % 3 == 0 ? 0x00 : v % 3 == 1 ? 0xFF : v >> 8);
          }
        }
      }
    }
    // The packed kernels' order, in scalar code.
    std::vector<float> ref(kNAct * kWRows);
    int8_t q[32];
    for (int64_t a = 0; a < kNAct; ++a) {
      for (int64_t r = 0; r < kWRows; ++r) {
        float acc = 0.0f;
        for (int64_t b = 0; b < kNb; ++b) {
          weight_integers(type, &w[r * w_row_bytes], b, q);
          const block_q8_0& ab = act[a * kNb + b];
          const float d = gguflow_fp16_to_f32(*reinterpret_cast<const gguflow_fp16_t*>(&w[r * w_row_bytes + b * (w_row_bytes / kNb)])) *
                          gguflow_fp16_to_f32(ab.d);
          int32_t dot = 0;
          for (int e = 0; e < 32; ++e) dot += int32_t{q[e]} * ab.qs[e];
          acc = std::fma(d, static_cast<float>(dot), acc);
        }
        ref[a * kWRows + r] = acc;
      }
    }
    const size_t act_row_bytes = kNb * sizeof(block_q8_0);
    for (int64_t n_act : {int64_t{1}, int64_t{7}, kNAct}) {
      constexpr int64_t kStride = kWRows + 5;
      std::vector<float> y(n_act * kStride, -1.0f);
      k.mat_mat(type, w.data(), w_row_bytes, kN, 0, kWRows, act.data(), act_row_bytes, n_act, y.data(), kStride);
      for (int64_t a = 0; a < n_act; ++a)
        for (int64_t r = 0; r < kWRows; ++r)
          ASSERT_EQ(y[a * kStride + r], ref[a * kWRows + r]) << "mat_mat n_act " << n_act << " act " << a << " row " << r;
    }
    for (int64_t a = 0; a < kNAct; ++a) {
      std::vector<float> y(kWRows, -1.0f);
      k.mat_vec(type, w.data(), w_row_bytes, kN, 0, kWRows, &act[a * kNb], y.data());
      for (int64_t r = 0; r < kWRows; ++r) ASSERT_EQ(y[r], ref[a * kWRows + r]) << "mat_vec act " << a << " row " << r;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Plugins, KernelParity, ::testing::ValuesIn(supported_plugin_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace gguflow::test
