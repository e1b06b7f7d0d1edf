// KV cache rows (ABI 4) in every plugin this CPU runs: kv_store_row writes GGML's bytes (the
// reference/quant fixtures for Q8_0, Q4_0, F16), and kv_dot / kv_axpy over a head's elements
// of a stored row equal a double-precision sum over the row as the reference dequantizer
// (runtime/quant) decodes it, and the scalar plugin's results to float rounding: for heads on
// block boundaries (the vector path) and for heads inside a block (head_dim 8, stories260K).
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plugins/abi/quant_blocks.h"
#include "runtime/quant/formats.h"
#include "tests/plugins/plugin_test_util.h"
#include "tests/support/test_data.h"

namespace gguflow::test {
namespace {

constexpr uint32_t kKvTypes[] = {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_Q8_0, GGML_TYPE_Q4_0};

std::vector<float> decode_reference(uint32_t type, const void* row, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  switch (type) {
    case GGML_TYPE_F32: std::memcpy(out.data(), row, sizeof(float) * n); break;
    case GGML_TYPE_F16: quant::dequantize_row_f16(static_cast<const gguflow_fp16_t*>(row), out.data(), n); break;
    case GGML_TYPE_Q8_0: quant::dequantize_row_q8_0(static_cast<const block_q8_0*>(row), out.data(), n); break;
    default: quant::dequantize_row_q4_0(static_cast<const block_q4_0*>(row), out.data(), n); break;
  }
  return out;
}

std::vector<float> random_floats(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.5f);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = dist(rng);
  return x;
}

class KvCacheRows : public ::testing::TestWithParam<std::string> {};

TEST_P(KvCacheRows, StoredRowsAreGgmlBytes) {
  const GguflowKernels& k = plugin_table(GetParam());
  const std::pair<const char*, uint32_t> fixtures[] = {
      {"q8_0", GGML_TYPE_Q8_0}, {"q4_0", GGML_TYPE_Q4_0}, {"f16", GGML_TYPE_F16}};
  for (const auto& [name, type] : fixtures) {
    const std::string base = std::string("reference/quant/") + name;
    GGUFLOW_REQUIRE_DATA(base + ".q");
    std::ifstream fin(data_path(base + ".f32"), std::ios::binary), qin(data_path(base + ".q"), std::ios::binary);
    const std::vector<char> input((std::istreambuf_iterator<char>(fin)), {});
    const std::vector<char> expected((std::istreambuf_iterator<char>(qin)), {});
    constexpr int64_t kRows = 16, kCols = 512;
    const size_t bytes = row_bytes(type, kCols);
    ASSERT_EQ(input.size(), kRows * kCols * sizeof(float));
    ASSERT_EQ(expected.size(), kRows * bytes);
    std::vector<char> got(bytes);
    for (int64_t r = 0; r < kRows; ++r) {
      k.kv_store_row(type, reinterpret_cast<const float*>(input.data()) + r * kCols, got.data(), kCols);
      ASSERT_EQ(0, std::memcmp(got.data(), expected.data() + r * bytes, bytes)) << name << " row " << r;
    }
  }
}

// q . row[offset, offset + n) and y += a * row[...] against double sums over the reference
// decoding, and against the scalar plugin, for each type and head geometry.
TEST_P(KvCacheRows, DotAndAxpyReadStoredRows) {
  const GguflowKernels& k = plugin_table(GetParam());
  const GguflowKernels& scalar = plugin_table("scalar");
  struct Geometry {
    int64_t width, head_dim;
  };
  // 4 heads of 8 in one block (stories260K), 2 of 64 (Qwen2.5-0.5B), 2 of 128, 5 of 96.
  const Geometry geometries[] = {{32, 8}, {128, 64}, {256, 128}, {480, 96}};
  uint32_t seed = 1;
  for (uint32_t type : kKvTypes) {
    for (const Geometry& g : geometries) {
      const std::vector<float> x = random_floats(g.width, seed++);
      std::vector<char> row(row_bytes(type, g.width));
      k.kv_store_row(type, x.data(), row.data(), g.width);
      const std::vector<float> decoded = decode_reference(type, row.data(), g.width);
      const std::vector<float> q = random_floats(g.head_dim, seed++);
      for (int64_t offset = 0; offset < g.width; offset += g.head_dim) {
        const std::string where = std::string(ggml_type_info(type)->name) + " width " +
                                  std::to_string(g.width) + " head at " + std::to_string(offset);
        double ref = 0, magnitude = 0;
        for (int64_t i = 0; i < g.head_dim; ++i) {
          ref += static_cast<double>(q[i]) * decoded[offset + i];
          magnitude += std::fabs(static_cast<double>(q[i]) * decoded[offset + i]);
        }
        // Float sums of head_dim products: within head_dim ulps of the sum of magnitudes.
        const double bound = 1e-6 * static_cast<double>(g.head_dim) * magnitude + 1e-30;
        const float got = k.kv_dot(type, q.data(), row.data(), offset, g.head_dim);
        EXPECT_NEAR(got, ref, bound) << where;
        EXPECT_NEAR(got, scalar.kv_dot(type, q.data(), row.data(), offset, g.head_dim), 2 * bound) << where;

        const float a = 0.37f;
        std::vector<float> y(q), y_scalar(q);
        k.kv_axpy(type, a, row.data(), offset, y.data(), g.head_dim);
        scalar.kv_axpy(type, a, row.data(), offset, y_scalar.data(), g.head_dim);
        for (int64_t i = 0; i < g.head_dim; ++i) {
          const double want = static_cast<double>(q[i]) + static_cast<double>(a) * decoded[offset + i];
          const double tol = 1e-6 * (std::fabs(q[i]) + std::fabs(a * decoded[offset + i])) + 1e-30;
          EXPECT_NEAR(y[i], want, tol) << where << " element " << i;
          EXPECT_NEAR(y[i], y_scalar[i], 2 * tol) << where << " element " << i;
        }
      }
    }
  }
}

// kv_dot_rows / kv_axpy_rows (ABI 5) over a run of rows for a block of queries: the bits of
// the one-row kv_dot / kv_axpy calls of the same plugin (kv_axpy in order of the row), and the
// scalar plugin's results to float rounding; for heads on block boundaries and inside a block,
// f32 / f16 heads whose width leaves a tail after the vectors (20) and 128-wide ones (the
// register-held 16-row dot of AVX-512), rows a little further
// apart than their bytes, runs longer than the kernels' chunks, and one query or several.
TEST_P(KvCacheRows, RowsEntriesAreTheOneRowCallsBitForBit) {
  const GguflowKernels& k = plugin_table(GetParam());
  const GguflowKernels& scalar = plugin_table("scalar");
  struct Geometry {
    int64_t width, head_dim;
  };
  const std::vector<Geometry> block_geometries = {{32, 8}, {128, 64}, {480, 96}};
  const std::vector<Geometry> float_geometries = {{32, 8}, {128, 64}, {60, 20}, {256, 128}};
  constexpr int64_t kRows = 150;
  uint32_t seed = 500;
  // One query reads the rows in place; five copy an f32 head's rows next to each other first.
  for (const int64_t kQueries : {int64_t{1}, int64_t{5}})
  for (uint32_t type : kKvTypes) {
    const bool blocks = type == GGML_TYPE_Q8_0 || type == GGML_TYPE_Q4_0;
    for (const Geometry& g : blocks ? block_geometries : float_geometries) {
      const size_t stride = row_bytes(type, g.width) + 8;  // rows 8 bytes apart beyond their blocks
      std::vector<char> rows(stride * kRows);
      for (int64_t j = 0; j < kRows; ++j)
        k.kv_store_row(type, random_floats(g.width, seed++).data(), rows.data() + j * stride, g.width);
      const std::vector<float> q = random_floats(kQueries * g.head_dim, seed++);
      std::vector<float> a = random_floats(kQueries * kRows, seed++);
      for (float& w : a) w = std::fabs(w) / kRows;  // weights as a softmax leaves them
      for (int64_t offset = 0; offset < g.width; offset += g.head_dim) {
        const std::string where = std::string(ggml_type_info(type)->name) + " width " +
                                  std::to_string(g.width) + " head at " + std::to_string(offset) + ", " +
                                  std::to_string(kQueries) + " queries";
        std::vector<float> s(kQueries * kRows), s_scalar(s.size());
        k.kv_dot_rows(type, q.data(), g.head_dim, kQueries, rows.data(), stride, kRows, offset, g.head_dim, s.data(), kRows);
        scalar.kv_dot_rows(type, q.data(), g.head_dim, kQueries, rows.data(), stride, kRows, offset, g.head_dim,
                           s_scalar.data(), kRows);
        std::vector<float> y(q), y_scalar(q), y_calls(q);
        k.kv_axpy_rows(type, a.data(), kRows, kQueries, rows.data(), stride, kRows, offset, y.data(), g.head_dim, g.head_dim);
        scalar.kv_axpy_rows(type, a.data(), kRows, kQueries, rows.data(), stride, kRows, offset, y_scalar.data(),
                            g.head_dim, g.head_dim);
        for (int64_t i = 0; i < kQueries; ++i) {
          const float* qi = q.data() + i * g.head_dim;
          for (int64_t j = 0; j < kRows; ++j) {
            const float one = k.kv_dot(type, qi, rows.data() + j * stride, offset, g.head_dim);
            ASSERT_EQ(s[i * kRows + j], one) << where << " query " << i << " row " << j;
            double magnitude = 0;
            for (int64_t e = 0; e < g.head_dim; ++e) magnitude += std::fabs(qi[e]) * 8.0;  // |k| < 8 here
            EXPECT_NEAR(s[i * kRows + j], s_scalar[i * kRows + j], 2e-6 * g.head_dim * magnitude) << where;
            k.kv_axpy(type, a[i * kRows + j], rows.data() + j * stride, offset, y_calls.data() + i * g.head_dim, g.head_dim);
          }
        }
        for (size_t e = 0; e < y.size(); ++e) {
          ASSERT_EQ(y[e], y_calls[e]) << where << " output element " << e;
          EXPECT_NEAR(y[e], y_scalar[e], 1e-5 * (std::fabs(q[e]) + 8.0)) << where << " output element " << e;
        }
      }
    }
  }
}

// The ABI's F16 contract (kernel_abi.h): kv_dot, kv_axpy and the _rows entries on F16 rows give
// exactly the F32 results on the rows widened to f32 (dequantize_row), which prompt attention
// relies on when it reads a widened copy of an f16 cache while decode reads the cache itself.
// Head widths with and without a vector tail, several queries, rows longer than a chunk.
TEST_P(KvCacheRows, F16RowsGiveTheF32ResultsOfTheWidenedRows) {
  const GguflowKernels& k = plugin_table(GetParam());
  ASSERT_EQ(k.act_type[GGML_TYPE_F16], static_cast<uint32_t>(GGML_TYPE_F16));  // dequantize_row widens f16
  constexpr int64_t kRows = 150, kQueries = 5;
  uint32_t seed = 900;
  for (const int64_t hd : {int64_t{20}, int64_t{64}, int64_t{128}}) {
    std::vector<char> half(row_bytes(GGML_TYPE_F16, hd) * kRows);
    std::vector<float> wide(static_cast<size_t>(hd * kRows));
    for (int64_t j = 0; j < kRows; ++j) {
      char* row = half.data() + j * row_bytes(GGML_TYPE_F16, hd);
      k.kv_store_row(GGML_TYPE_F16, random_floats(hd, seed++).data(), row, hd);
      k.dequantize_row(GGML_TYPE_F16, row, wide.data() + j * hd, hd);
    }
    const std::vector<float> q = random_floats(kQueries * hd, seed++);
    std::vector<float> a = random_floats(kQueries * kRows, seed++);
    for (float& w : a) w = std::fabs(w) / kRows;
    std::vector<float> s16(kQueries * kRows), s32(s16.size());
    k.kv_dot_rows(GGML_TYPE_F16, q.data(), hd, kQueries, half.data(), row_bytes(GGML_TYPE_F16, hd), kRows, 0, hd,
                  s16.data(), kRows);
    k.kv_dot_rows(GGML_TYPE_F32, q.data(), hd, kQueries, wide.data(), sizeof(float) * hd, kRows, 0, hd, s32.data(),
                  kRows);
    EXPECT_EQ(s16, s32) << "kv_dot_rows, head of " << hd;
    std::vector<float> y16(q), y32(q);
    k.kv_axpy_rows(GGML_TYPE_F16, a.data(), kRows, kQueries, half.data(), row_bytes(GGML_TYPE_F16, hd), kRows, 0,
                   y16.data(), hd, hd);
    k.kv_axpy_rows(GGML_TYPE_F32, a.data(), kRows, kQueries, wide.data(), sizeof(float) * hd, kRows, 0, y32.data(),
                   hd, hd);
    EXPECT_EQ(y16, y32) << "kv_axpy_rows, head of " << hd;
    for (int64_t j = 0; j < kRows; ++j) {
      const char* row = half.data() + j * row_bytes(GGML_TYPE_F16, hd);
      ASSERT_EQ(k.kv_dot(GGML_TYPE_F16, q.data(), row, 0, hd), k.dot_f32(q.data(), wide.data() + j * hd, hd))
          << "kv_dot, head of " << hd << ", row " << j;
      std::vector<float> one16(q.begin(), q.begin() + hd), one32(one16);
      k.kv_axpy(GGML_TYPE_F16, a[j], row, 0, one16.data(), hd);
      k.axpy_f32(a[j], wide.data() + j * hd, one32.data(), hd);
      ASSERT_EQ(one16, one32) << "kv_axpy, head of " << hd << ", row " << j;
    }
  }
}

// The stored values are close to the input: the formats' own error (a guard against a
// kernel that stores zeros and reads zeros back consistently).
TEST_P(KvCacheRows, StoredRowsKeepTheValues) {
  const GguflowKernels& k = plugin_table(GetParam());
  const int64_t n = 256;
  const std::vector<float> x = random_floats(n, 99);
  // Largest error per element relative to the block's max |x|: f16 2^-11, q8_0 half a step
  // of max/127, q4_0 a step of max/8 (its grid is asymmetric: -8..7).
  const std::pair<uint32_t, double> types[] = {
      {GGML_TYPE_F32, 0.0}, {GGML_TYPE_F16, 1.0 / 2048}, {GGML_TYPE_Q8_0, 0.5 / 127 + 1e-3}, {GGML_TYPE_Q4_0, 1.0 / 8 + 1e-3}};
  for (const auto& [type, relative] : types) {
    std::vector<char> row(row_bytes(type, n));
    k.kv_store_row(type, x.data(), row.data(), n);
    const std::vector<float> back = decode_reference(type, row.data(), n);
    for (int64_t b = 0; b < n / 32; ++b) {
      float amax = 0;
      for (int64_t i = 32 * b; i < 32 * b + 32; ++i) amax = std::max(amax, std::fabs(x[i]));
      for (int64_t i = 32 * b; i < 32 * b + 32; ++i)
        EXPECT_LE(std::fabs(back[i] - x[i]), relative * amax) << ggml_type_info(type)->name << " element " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Plugins, KvCacheRows, ::testing::ValuesIn(supported_plugin_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace gguflow::test
