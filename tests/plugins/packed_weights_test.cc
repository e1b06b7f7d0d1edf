// Packed (row-interleaved) weights, ABI 2: for every plugin this CPU runs and every weight type
// it packs (pack_rows[w] > 0), pack() followed by mat_vec_packed / mat_mat_packed gives the
// results of mat_vec / mat_mat on the row-major matrix to float rounding: within
// kernel_parity_test's bound of an independent reference (runtime/quant's dequantizer with a
// double dot product), as are the scalar plugin and the row-major kernel. A row's bits do not
// depend on the row range, and mat_mat_packed equals n_act mat_vec_packed calls bit for bit;
// nothing outside the range is written.
//
// Matrices: n_rows in {1, 2, 17} groups (8, 16, 136 rows for a group of 8), n in {32, 96, 896,
// 4864} (Qwen2.5-0.5B widths and two tiny ones), weights either Gaussian or "extreme" (rows
// scaled by 1e-4 and 1e4 in turn, one all-zero row). Ranges: whole, group-aligned sub-ranges,
// unaligned ones, an empty one and the last row alone.
//
// Tolerance for the reference (see kernel_parity_test.cc for the derivation):
//   |kernel - reference| <= (blocks + 8) * 2^-24 * 3 * sum_k |a_k| max_block|w|
//                           (+ the Q8_1 activation-sum rounding term for Q4_1 / Q5_1)
// and the scalar plugin is within the same bound of the reference, so within twice it of ours.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plugins/abi/quant_blocks.h"
#include "runtime/quant/quant.h"
#include "tests/plugins/plugin_test_util.h"

namespace gguflow::test {
namespace {

constexpr int64_t kGroupCounts[] = {1, 2, 17};   // n_rows = groups * pack_rows
constexpr int64_t kWidths[] = {32, 96, 512, 896, 4864};
constexpr int64_t kMaxActs = 17;                  // mat_mat batch sizes 1..17
constexpr int64_t kYPad = 5;                      // y_stride = n_rows + kYPad for mat_mat
// Act rows are act_row_bytes + this apart: a stride the rows alone would not give, kept a
// multiple of 4 so every row keeps its blocks' alignment (Q8_K's d is a float; kernel_abi.h).
constexpr size_t kActPadBytes = 36;
constexpr uint32_t kSentinelBits = 0x7fc0deadu;   // a quiet NaN no kernel computes
constexpr uint8_t kGuardByte = 0xa5;              // fills bytes past the packed matrix
constexpr size_t kGuardBytes = 64;

enum class Weights { kGaussian, kExtreme };

float sentinel() {
  float f;
  std::memcpy(&f, &kSentinelBits, sizeof f);
  return f;
}
uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
std::string describe(float f) {
  std::ostringstream s;
  s << f << " (0x" << std::hex << bits(f) << ")";
  return s.str();
}

// One quantized problem: weights [n_rows][w_row_bytes] row-major and packed, activations
// [kMaxActs][act_stride] (act_row_bytes used of each), quantized by runtime/quant.
struct Problem {
  uint32_t type = 0, act_type = 0;
  int64_t n = 0, n_rows = 0, group = 0;
  Weights weights = Weights::kGaussian;
  size_t w_row_bytes = 0, act_row_bytes = 0, act_stride = 0;
  std::vector<uint8_t> w, packed, act;  // packed: exactly n_rows * w_row_bytes

  std::string name() const {
    std::ostringstream s;
    s << ggml_type_info(type)->name << " n=" << n << " rows=" << n_rows
      << (weights == Weights::kExtreme ? " extreme-scale weights" : " gaussian weights");
    return s.str();
  }
};

std::vector<float> weight_values(const Problem& p, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(p.n_rows * p.n));  // [n_rows][n]
  const int64_t zero_row = std::min<int64_t>(5, p.n_rows - 1);
  for (int64_t r = 0; r < p.n_rows; ++r) {
    float scale = 1.0f;
    if (p.weights == Weights::kExtreme) scale = r % 3 == 0 ? 1e-4f : r % 3 == 1 ? 1e4f : 1.0f;
    for (int64_t k = 0; k < p.n; ++k) x[r * p.n + k] = scale * normal(rng);
    if (p.weights == Weights::kExtreme && r == zero_row)
      std::fill(&x[r * p.n], &x[r * p.n] + p.n, 0.0f);
  }
  return x;
}

// Quantizes weights and activations and packs the weights with `k`. Checks that pack leaves
// the source alone and writes no byte past n_rows * w_row_bytes.
Problem make_problem(const GguflowKernels& k, uint32_t type, Weights weights, int64_t groups, int64_t n) {
  Problem p;
  p.type = type;
  p.act_type = k.act_type[type];
  p.n = n;
  p.group = k.pack_rows[type];
  p.n_rows = groups * p.group;
  p.weights = weights;
  p.w_row_bytes = row_bytes(type, n);
  p.act_row_bytes = row_bytes(p.act_type, n);
  p.act_stride = p.act_row_bytes + kActPadBytes;

  const uint32_t seed = 1000u * type + 10u * static_cast<uint32_t>(groups) + static_cast<uint32_t>(n) +
                        (weights == Weights::kExtreme ? 7u : 0u);
  const std::vector<float> wf = weight_values(p, seed);
  p.w.resize(p.n_rows * p.w_row_bytes);
  for (int64_t r = 0; r < p.n_rows; ++r) quantize_row(type, &wf[r * n], &p.w[r * p.w_row_bytes], n);

  std::mt19937 rng(seed + 1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> af(n);
  p.act.assign(kMaxActs * p.act_stride, 0);
  for (int64_t a = 0; a < kMaxActs; ++a) {
    for (auto& v : af) v = normal(rng);
    quantize_row(p.act_type, af.data(), &p.act[a * p.act_stride], n);
  }

  const std::vector<uint8_t> w_before = p.w;
  std::vector<uint8_t> guarded(p.w.size() + kGuardBytes, kGuardByte);  // packed matrix, then guard
  k.pack(type, p.w.data(), p.w_row_bytes, n, p.n_rows, guarded.data());
  EXPECT_EQ(p.w, w_before) << p.name() << ": pack modified its source";
  for (size_t i = p.w.size(); i < guarded.size(); ++i) {
    EXPECT_EQ(guarded[i], kGuardByte) << p.name() << ": pack wrote past the matrix, byte " << i;
    if (guarded[i] != kGuardByte) break;
  }
  // The kernels get an exact-size copy, so a sanitizer build catches reads past the matrix.
  p.packed.assign(guarded.begin(), guarded.begin() + static_cast<std::ptrdiff_t>(p.w.size()));
  return p;
}

// Every plugin-packed type, with every shape and weight kind, handed to `check`.
template <typename Check>
void for_each_packed_problem(const GguflowKernels& k, Check check) {
  for (uint32_t type = 0; type < GGML_TYPE_COUNT; ++type) {
    if (k.pack_rows[type] == 0) continue;
    if (!k.pack || !k.mat_vec_packed || !k.mat_mat_packed || !k.dequantize_row_packed) {
      ADD_FAILURE() << ggml_type_info(type)->name << " is packed but a packed entry point is null";
      return;
    }
    const int64_t block = ggml_type_info(type)->block_size;
    for (Weights weights : {Weights::kGaussian, Weights::kExtreme})
      for (int64_t groups : kGroupCounts)
        for (int64_t n : kWidths) {
          if (n % block != 0) continue;
          const Problem p = make_problem(k, type, weights, groups, n);
          SCOPED_TRACE(p.name());
          check(p);
        }
  }
}

bool packs_anything(const GguflowKernels& k) {
  return std::any_of(std::begin(k.pack_rows), std::end(k.pack_rows), [](uint32_t g) { return g > 0; });
}

// Row ranges [begin, end) to try on n_rows rows in groups of `group`.
std::vector<std::pair<int64_t, int64_t>> row_ranges(int64_t n_rows, int64_t group) {
  const std::pair<int64_t, int64_t> all[] = {
      {0, n_rows},                      // whole
      {0, group},                       // first group
      {group, 2 * group},               // second group
      {n_rows - group, n_rows},         // last group
      {group, n_rows},                  // all but the first group
      {3, 13},  {7, 9},  {0, 1},        // unaligned
      {5, 5},                           // empty
      {n_rows - 1, n_rows},             // last row only
      {1, n_rows - 1},                  // both ends unaligned
      {group - 1, group + 1},           // straddles a group boundary
      {group + 3, n_rows - group + 2},  // unaligned inside
  };
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const auto& r : all)
    if (r.first >= 0 && r.first <= r.second && r.second <= n_rows) ranges.push_back(r);
  return ranges;
}

// Checks that y[r] has the bits of expected[r] for r in [begin, end) and that rows outside it,
// up to n_rows, still hold the sentinel. Returns false (after one failure message) on the first
// difference.
bool same_output_row(const float* y, const float* expected, int64_t n_rows, int64_t begin, int64_t end,
                     const std::string& where) {
  for (int64_t r = 0; r < n_rows; ++r) {
    if (r >= begin && r < end) {
      if (bits(y[r]) != bits(expected[r])) {
        ADD_FAILURE() << where << ": first difference at row " << r << ": " << describe(y[r]) << ", expected "
                      << describe(expected[r]);
        return false;
      }
    } else if (bits(y[r]) != kSentinelBits) {
      ADD_FAILURE() << where << ": wrote row " << r << " outside the range (value " << describe(y[r]) << ")";
      return false;
    }
  }
  return true;
}

std::string range_text(int64_t begin, int64_t end) {
  return "[" + std::to_string(begin) + "," + std::to_string(end) + ")";
}

class PackedWeights : public ::testing::TestWithParam<std::string> {};
// The data tests run on the plugins that pack something (the others have nothing to test:
// instantiating them would only report skips).
class PackedWeightsData : public ::testing::TestWithParam<std::string> {};

std::vector<std::string> packing_plugin_names() {
  std::vector<std::string> names;
  for (const std::string& name : supported_plugin_names())
    if (packs_anything(plugin_table(name))) names.push_back(name);
  return names;
}

TEST_P(PackedWeights, PackedTypesHaveKernelsAndActivationFormats) {
  const GguflowKernels& k = plugin_table(GetParam());
  for (uint32_t type = 0; type < GGML_TYPE_COUNT; ++type) {
    if (k.pack_rows[type] == 0) continue;
    SCOPED_TRACE(ggml_type_info(type)->name);
    EXPECT_NE(k.act_type[type], GGML_TYPE_COUNT) << "packed type without a row-major kernel";
    EXPECT_NE(k.pack, nullptr);
    EXPECT_NE(k.mat_vec_packed, nullptr);
    EXPECT_NE(k.mat_mat_packed, nullptr);
    EXPECT_NE(k.dequantize_row_packed, nullptr);
  }
}

// A row's result is the same whatever range it is computed in (so whatever the thread split),
// and the range is all that is written.
TEST_P(PackedWeightsData, MatVecPackedGivesTheSameBitsForEveryRange) {
  const GguflowKernels& k = plugin_table(GetParam());
  for_each_packed_problem(k, [&](const Problem& p) {
    std::vector<float> y(p.n_rows), y_whole(p.n_rows);  // [n_rows]
    for (int64_t a : {int64_t{0}, int64_t{5}}) {
      const uint8_t* act = &p.act[a * p.act_stride];
      k.mat_vec_packed(p.type, p.packed.data(), p.w_row_bytes, p.n, 0, p.n_rows, act, y_whole.data());
      for (const auto& [begin, end] : row_ranges(p.n_rows, p.group)) {
        std::fill(y.begin(), y.end(), sentinel());
        k.mat_vec_packed(p.type, p.packed.data(), p.w_row_bytes, p.n, begin, end, act, y.data());
        if (!same_output_row(y.data(), y_whole.data(), p.n_rows, begin, end,
                             "mat_vec_packed range " + range_text(begin, end) + " act row " + std::to_string(a)))
          return;
      }
    }
  });
}

// Embedding lookups in a packed table (a tied lm-head) decode the row-major row's values.
TEST_P(PackedWeightsData, DequantizeRowPackedEqualsDequantizeRowForEveryRow) {
  const GguflowKernels& k = plugin_table(GetParam());
  ASSERT_NE(k.dequantize_row_packed, nullptr);
  for_each_packed_problem(k, [&](const Problem& p) {
    std::vector<float> packed(p.n), row_major(p.n);  // [n]
    for (int64_t r = 0; r < p.n_rows; ++r) {
      k.dequantize_row(p.type, &p.w[r * p.w_row_bytes], row_major.data(), p.n);
      k.dequantize_row_packed(p.type, p.packed.data(), p.w_row_bytes, p.n, r, packed.data());
      ASSERT_EQ(std::memcmp(packed.data(), row_major.data(), sizeof(float) * p.n), 0)
          << "dequantize_row_packed differs from dequantize_row at row " << r;
    }
  });
}

// mat_mat_packed (prefill on packed weights) equals one mat_vec_packed per activation row, bit
// for bit, for every range and batch size.
TEST_P(PackedWeightsData, MatMatPackedEqualsMatVecPackedForEveryRangeAndBatch) {
  const GguflowKernels& k = plugin_table(GetParam());
  for_each_packed_problem(k, [&](const Problem& p) {
    const int64_t y_stride = p.n_rows + kYPad;
    std::vector<float> y_packed(kMaxActs * y_stride);   // [n_act][y_stride]
    std::vector<float> y_vec(kMaxActs * y_stride);      // [kMaxActs][y_stride], whole rows
    for (int64_t a = 0; a < kMaxActs; ++a)
      k.mat_vec_packed(p.type, p.packed.data(), p.w_row_bytes, p.n, 0, p.n_rows, &p.act[a * p.act_stride],
                       &y_vec[a * y_stride]);
    for (const auto& [begin, end] : row_ranges(p.n_rows, p.group)) {
      for (int64_t n_act = 1; n_act <= kMaxActs; ++n_act) {
        std::fill(y_packed.begin(), y_packed.end(), sentinel());
        k.mat_mat_packed(p.type, p.packed.data(), p.w_row_bytes, p.n, begin, end, p.act.data(), p.act_stride,
                         n_act, y_packed.data(), y_stride);
        // Rows [n_rows, y_stride) of each output row and every row past n_act stay untouched too.
        for (int64_t a = 0; a < kMaxActs; ++a) {
          const int64_t b = a < n_act ? begin : 0, e = a < n_act ? end : 0;
          if (!same_output_row(&y_packed[a * y_stride], &y_vec[a * y_stride], y_stride, b, e,
                               "mat_mat_packed range " + range_text(begin, end) + " n_act " +
                                   std::to_string(n_act) + " act row " + std::to_string(a)))
            return;
        }
      }
    }
  });
}

// Row-major prefill and decode on x86 run the packed kernels on panels packed on the fly
// (plugins/kernels/kernels_panels.cc), so for these widths mat_mat and mat_vec on the GGUF rows
// give the packed kernels' bits, k-quants and block-32 formats alike: a prompt's logits do not
// change when the session packs its weights. Every range (groups cut at either end included)
// and batch size 1..17.
TEST_P(PackedWeightsData, RowMajorMatMatGivesThePackedBits) {
  const GguflowKernels& k = plugin_table(GetParam());
  for_each_packed_problem(k, [&](const Problem& p) {
    const int64_t y_stride = p.n_rows + kYPad;
    std::vector<float> y_row_major(kMaxActs * y_stride);  // [n_act][y_stride]
    std::vector<float> y_packed(kMaxActs * y_stride);     // [kMaxActs][y_stride], whole rows
    k.mat_mat_packed(p.type, p.packed.data(), p.w_row_bytes, p.n, 0, p.n_rows, p.act.data(), p.act_stride,
                     kMaxActs, y_packed.data(), y_stride);
    for (const auto& [begin, end] : row_ranges(p.n_rows, p.group)) {
      for (int64_t n_act : {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{9}, kMaxActs}) {
        std::fill(y_row_major.begin(), y_row_major.end(), sentinel());
        k.mat_mat(p.type, p.w.data(), p.w_row_bytes, p.n, begin, end, p.act.data(), p.act_stride, n_act,
                  y_row_major.data(), y_stride);
        for (int64_t a = 0; a < kMaxActs; ++a) {
          const int64_t b = a < n_act ? begin : 0, e = a < n_act ? end : 0;
          if (!same_output_row(&y_row_major[a * y_stride], &y_packed[a * y_stride], y_stride, b, e,
                               "mat_mat range " + range_text(begin, end) + " n_act " + std::to_string(n_act) +
                                   " act row " + std::to_string(a)))
            return;
        }
      }
    }
  });
}

// Packed, row-major and scalar-plugin results each within the bound of the reference (so of
// each other: to float rounding; the scalar plugin accumulates in another order, and so do the
// x86 row-major block-32 kernels, eight lanes per row where the packed kernels use one).
TEST_P(PackedWeightsData, MatVecPackedMatchesDequantizedReferenceRowMajorAndScalarPlugin) {
  const GguflowKernels& k = plugin_table(GetParam());
  const auto names = supported_plugin_names();
  const bool have_scalar = std::find(names.begin(), names.end(), "scalar") != names.end();
  const GguflowKernels* scalar = have_scalar ? &plugin_table("scalar") : nullptr;
  for_each_packed_problem(k, [&](const Problem& p) {
    const int64_t block = ggml_type_info(p.type)->block_size;
    std::vector<float> wd(p.n_rows * p.n), ad(p.n);  // dequantized [n_rows][n] and [n]
    for (int64_t r = 0; r < p.n_rows; ++r) dequantize_row(p.type, &p.w[r * p.w_row_bytes], &wd[r * p.n], p.n);
    for (int64_t a : {int64_t{0}, int64_t{11}}) {
      const uint8_t* act = &p.act[a * p.act_stride];
      dequantize_row(p.act_type, act, ad.data(), p.n);
      std::vector<float> y(p.n_rows), y_scalar(p.n_rows), y_row_major(p.n_rows);
      k.mat_vec_packed(p.type, p.packed.data(), p.w_row_bytes, p.n, 0, p.n_rows, act, y.data());
      k.mat_vec(p.type, p.w.data(), p.w_row_bytes, p.n, 0, p.n_rows, act, y_row_major.data());
      if (scalar)
        scalar->mat_vec(p.type, p.w.data(), p.w_row_bytes, p.n, 0, p.n_rows, act, y_scalar.data());
      for (int64_t r = 0; r < p.n_rows; ++r) {
        double dot = 0.0, magnitude = 0.0, s_rounding = 0.0;
        for (int64_t b0 = 0; b0 < p.n; b0 += block) {
          double block_max = 0.0;
          for (int64_t j = b0; j < b0 + block; ++j) block_max = std::max(block_max, std::fabs(double(wd[r * p.n + j])));
          if (p.act_type == GGML_TYPE_Q8_1) {
            const auto& ab = reinterpret_cast<const block_q8_1*>(act)[b0 / 32];
            double sum_q = 0.0;
            for (int8_t q : ab.qs) sum_q += q;
            const double exact_s = double(gguflow_fp16_to_f32(ab.d)) * sum_q;
            s_rounding += block_max * std::fabs(double(gguflow_fp16_to_f32(ab.s)) - exact_s);
          }
          for (int64_t j = b0; j < b0 + block; ++j) {
            dot += double(wd[r * p.n + j]) * double(ad[j]);
            magnitude += std::fabs(double(ad[j])) * 3.0 * block_max;
          }
        }
        const double tol = double(p.n / block + 8) * std::ldexp(1.0, -24) * magnitude + s_rounding;
        ASSERT_NEAR(y[r], dot, tol) << "mat_vec_packed vs dequantized reference, act row " << a << " row " << r;
        ASSERT_NEAR(y_row_major[r], dot, tol) << "mat_vec vs dequantized reference, act row " << a << " row " << r;
        ASSERT_NEAR(y[r], y_row_major[r], 2.0 * tol) << "mat_vec_packed vs mat_vec, act row " << a << " row " << r;
        if (scalar) {
          ASSERT_NEAR(y[r], y_scalar[r], 2.0 * tol) << "mat_vec_packed vs scalar plugin, act row " << a << " row " << r;
        }
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Plugins, PackedWeights, ::testing::ValuesIn(supported_plugin_names()),
                         [](const auto& info) { return info.param; });
// Empty on a CPU without AVX2 (no plugin packs there): allowed, nothing to check.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PackedWeightsData);
INSTANTIATE_TEST_SUITE_P(Plugins, PackedWeightsData, ::testing::ValuesIn(packing_plugin_names()),
                         [](const auto& info) { return info.param; });

// A regression that silently turns packing off would pass every test above vacuously: every
// x86 plugin from AVX2 up packs the five types of the shipped models in groups of 8 rows, and
// the portable ones pack nothing.
TEST(PackedWeightsExpectation, EachPluginPacksExactlyTheExpectedTypes) {
  const auto names = supported_plugin_names();
  const uint32_t packed[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q5_0, GGML_TYPE_Q8_0, GGML_TYPE_Q4_K, GGML_TYPE_Q6_K};
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const GguflowKernels& k = plugin_table(name);
    const bool x86_packing = name != "scalar" && name != "sse4";
    for (uint32_t t = 0; t < GGML_TYPE_COUNT; ++t) {
      const bool expected = x86_packing && std::find(std::begin(packed), std::end(packed), t) != std::end(packed);
      EXPECT_EQ(k.pack_rows[t], expected ? 8u : 0u) << "type " << t;
    }
  }
}

}  // namespace
}  // namespace gguflow::test
