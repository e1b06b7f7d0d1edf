// quantize_act of every plugin this CPU runs is bit-exact with GGML's reference quantizers,
// checked against the fixtures in shared/data/reference/quant (DATA.md section 1: ggml's own
// bytes for a 16 x 512 input with all-zero, tiny, huge and outlier rows).
#include <cmath>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plugins/abi/quant_blocks.h"
#include "runtime/quant/quant.h"
#include "tests/plugins/plugin_test_util.h"
#include "tests/support/test_data.h"

namespace gguflow::test {
namespace {

std::vector<char> read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

class ActivationQuant : public ::testing::TestWithParam<std::string> {
 protected:
  // Quantizes each row of <name>.f32 with the plugin and compares with <name>.q byte for byte.
  void expect_fixture(const std::string& name, uint32_t act_type) {
    const std::string base = "reference/quant/" + name;
    GGUFLOW_REQUIRE_DATA(base + ".q");
    const GguflowKernels& k = plugin_table(GetParam());
    const auto input = read_all(data_path(base + ".f32"));
    const auto expected = read_all(data_path(base + ".q"));
    constexpr int64_t kRows = 16, kCols = 512;
    ASSERT_EQ(input.size(), kRows * kCols * sizeof(float));
    const size_t bytes = row_bytes(act_type, kCols);
    ASSERT_EQ(expected.size(), kRows * bytes);
    std::vector<char> got(bytes);
    for (int64_t r = 0; r < kRows; ++r) {
      const float* x = reinterpret_cast<const float*>(input.data()) + r * kCols;
      k.quantize_act(act_type, x, got.data(), kCols);
      for (size_t i = 0; i < bytes; ++i)
        ASSERT_EQ(got[i], expected[r * bytes + i]) << name << " row " << r << " byte " << i;
    }
  }
};

TEST_P(ActivationQuant, Q8_0IsBitExactWithGgml) { expect_fixture("q8_0", GGML_TYPE_Q8_0); }
TEST_P(ActivationQuant, Q8_KIsBitExactWithGgml) { expect_fixture("q8_K", GGML_TYPE_Q8_K); }
TEST_P(ActivationQuant, F16IsBitExactWithGgml) { expect_fixture("f16", GGML_TYPE_F16); }
TEST_P(ActivationQuant, BF16IsBitExactWithGgml) { expect_fixture("bf16", GGML_TYPE_BF16); }

// GGML rounds Q8_0/Q8_1 activations with roundf (half away from zero). The fixtures rarely
// hit exact ties, so: a block whose largest magnitude is 127 has d = 1 and id = 1, and its
// integers are roundf of the inputs themselves (libm's roundf as the independent reference).
TEST_P(ActivationQuant, Q8_0And_Q8_1RoundTiesAwayFromZeroLikeRoundf) {
  const GguflowKernels& k = plugin_table(GetParam());
  const float ties[] = {0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 126.5f, -126.5f, 0.49999997f,
                        -0.49999997f, 1.4999999f, -2.5000002f, 3.5f, 64.5f, -64.49999f, 0.0f};
  std::vector<float> x(64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = ties[i % std::size(ties)];
  x[31] = 127.0f;  // each block's largest magnitude: d = 1
  x[63] = -127.0f;
  for (uint32_t type : {GGML_TYPE_Q8_0, GGML_TYPE_Q8_1}) {
    std::vector<char> q(row_bytes(type, 64));
    k.quantize_act(type, x.data(), q.data(), 64);
    const size_t block = type == GGML_TYPE_Q8_0 ? sizeof(block_q8_0) : sizeof(block_q8_1);
    const size_t qs_at = type == GGML_TYPE_Q8_0 ? offsetof(block_q8_0, qs) : offsetof(block_q8_1, qs);
    for (int i = 0; i < 64; ++i) {
      const auto got = static_cast<int8_t>(q[(i / 32) * block + qs_at + i % 32]);
      EXPECT_EQ(got, static_cast<int8_t>(std::roundf(x[i])))
          << ggml_type_info(type)->name << " element " << i << " = " << x[i];
    }
  }
}

// Q8_K takes its scale from the element of largest magnitude, sign included, the first one on a
// tie (GGML's strict >): blocks where +m and -m tie in either order, where the largest element
// is the block's last, all zero, holding a NaN (one before the largest element in its vector
// lane, one after), infinities, and with a maximum so small that the scale overflows, against
// the host's scalar reference quantizer (runtime/quant), byte for byte.
TEST_P(ActivationQuant, Q8_KMatchesTheReferenceOnMagnitudeTiesZerosNansAndTinyScales) {
  const GguflowKernels& k = plugin_table(GetParam());
  constexpr int64_t kN = 256 * 10;
  std::vector<float> x(kN);
  for (int64_t i = 0; i < kN; ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 2.0f;
  x[5] = -3.0f, x[9] = 3.0f;            // block 0: -3 first
  x[256 + 5] = 3.0f, x[256 + 9] = -3.0f;  // block 1: +3 first
  x[512 + 255] = -7.5f;                  // block 2: the last element
  std::fill(x.begin() + 768, x.begin() + 1024, 0.0f);  // block 3: zero
  x[1024 + 17] = std::numeric_limits<float>::quiet_NaN();  // block 4
  x[1280 + 3] = 1e-30f;                  // block 5: a tiny element beside ordinary ones
  std::fill(x.begin() + 1536, x.begin() + 1792, 1.0f);  // block 6: 5 first, then a NaN in its lane
  x[1536] = 5.0f;
  x[1536 + 16] = std::numeric_limits<float>::quiet_NaN();
  for (int64_t i = 1792; i < 2048; ++i) x[i] = 1e-38f * static_cast<float>(i % 7 + 1);  // block 7
  x[2048 + 100] = std::numeric_limits<float>::infinity();  // block 8
  x[2304 + 7] = -std::numeric_limits<float>::infinity(), x[2304 + 8] = std::numeric_limits<float>::infinity();
  std::vector<char> got(row_bytes(GGML_TYPE_Q8_K, kN)), want(got.size());
  k.quantize_act(GGML_TYPE_Q8_K, x.data(), got.data(), kN);
  quantize_row(GGML_TYPE_Q8_K, x.data(), want.data(), kN);
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(got[i], want[i]) << "byte " << i << " (block " << i / sizeof(block_q8_K) << ")";
}

TEST_P(ActivationQuant, TableListsGgmlActivationTypes) {
  const GguflowKernels& k = plugin_table(GetParam());
  EXPECT_EQ(k.act_type[GGML_TYPE_Q4_0], GGML_TYPE_Q8_0);
  EXPECT_EQ(k.act_type[GGML_TYPE_Q5_0], GGML_TYPE_Q8_0);
  EXPECT_EQ(k.act_type[GGML_TYPE_Q8_0], GGML_TYPE_Q8_0);
  EXPECT_EQ(k.act_type[GGML_TYPE_Q4_1], GGML_TYPE_Q8_1);
  EXPECT_EQ(k.act_type[GGML_TYPE_Q5_1], GGML_TYPE_Q8_1);
  for (uint32_t t : {GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K})
    EXPECT_EQ(k.act_type[t], GGML_TYPE_Q8_K);
  EXPECT_EQ(k.act_type[GGML_TYPE_F16], GGML_TYPE_F16);
  EXPECT_EQ(k.act_type[GGML_TYPE_BF16], GGML_TYPE_BF16);
  EXPECT_EQ(k.act_type[GGML_TYPE_F32], GGML_TYPE_F32);
  EXPECT_EQ(k.act_type[GGML_TYPE_IQ2_XXS], GGML_TYPE_COUNT);
}

INSTANTIATE_TEST_SUITE_P(Plugins, ActivationQuant, ::testing::ValuesIn(supported_plugin_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace gguflow::test
