// Bit-exactness of the scalar reference codecs against GGML's own output
// (shared/data/reference/quant, DATA.md section 1): for every type, quantizing the 16x512
// input must give exactly GGML's bytes, and dequantizing GGML's bytes exactly GGML's floats.
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plugins/abi/ggml_type.h"
#include "plugins/abi/quant_blocks.h"
#include "ops/error.h"
#include "runtime/quant/quant.h"
#include "tests/support/test_data.h"

namespace gguflow {
namespace {

constexpr int kRows = 16;
constexpr int kCols = 512;

struct RefType {
  const char* file_stem;  // name used in reference/quant/ and index.tsv
  uint32_t type;
};

// Every type of DATA.md section 1; `IndexListsExactlyTheseTypes` keeps it in step with the data.
const RefType kRefTypes[] = {
    {"f16", GGML_TYPE_F16},   {"bf16", GGML_TYPE_BF16}, {"q4_0", GGML_TYPE_Q4_0},
    {"q4_1", GGML_TYPE_Q4_1}, {"q5_0", GGML_TYPE_Q5_0}, {"q5_1", GGML_TYPE_Q5_1},
    {"q8_0", GGML_TYPE_Q8_0}, {"q2_K", GGML_TYPE_Q2_K}, {"q3_K", GGML_TYPE_Q3_K},
    {"q4_K", GGML_TYPE_Q4_K}, {"q5_K", GGML_TYPE_Q5_K}, {"q6_K", GGML_TYPE_Q6_K},
    {"q8_K", GGML_TYPE_Q8_K},
};

std::vector<uint8_t> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot open " << path;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::vector<float> read_floats(const std::filesystem::path& path) {
  std::vector<uint8_t> bytes = read_bytes(path);
  std::vector<float> floats(bytes.size() / sizeof(float));
  std::memcpy(floats.data(), bytes.data(), floats.size() * sizeof(float));
  return floats;
}

size_t row_bytes(uint32_t type) {
  const GgmlTypeInfo* info = ggml_type_info(type);
  return kCols / info->block_size * info->type_size;
}

class QuantReference : public ::testing::TestWithParam<RefType> {
 protected:
  std::filesystem::path ref(const std::string& suffix) const {
    return test::data_path(std::string("reference/quant/") + GetParam().file_stem + suffix);
  }
};

TEST_P(QuantReference, QuantizeGivesGgmlBytes) {
  GGUFLOW_REQUIRE_DATA(std::string("reference/quant/") + GetParam().file_stem + ".q");
  const uint32_t type = GetParam().type;
  std::vector<float> input = read_floats(ref(".f32"));      // [16][512]
  std::vector<uint8_t> expected = read_bytes(ref(".q"));    // [16][row_bytes]
  const size_t rb = row_bytes(type);
  ASSERT_EQ(input.size(), size_t{kRows * kCols});
  ASSERT_EQ(expected.size(), kRows * rb);

  std::vector<uint8_t> actual(kRows * rb, 0xA5);
  for (int r = 0; r < kRows; ++r) {
    size_t written = quantize_row(type, input.data() + r * kCols, actual.data() + r * rb, kCols);
    ASSERT_EQ(written, rb);
  }
  for (int r = 0; r < kRows; ++r) {
    const uint8_t* a = actual.data() + r * rb;
    const uint8_t* e = expected.data() + r * rb;
    if (std::memcmp(a, e, rb) != 0) {
      size_t at = 0;
      while (a[at] == e[at]) ++at;
      ADD_FAILURE() << GetParam().file_stem << " row " << r << ": first differing byte " << at
                    << " (block " << at / ggml_type_info(type)->type_size << "): got "
                    << int(a[at]) << ", ggml " << int(e[at]);
    }
  }
}

TEST_P(QuantReference, DequantizeGivesGgmlFloats) {
  GGUFLOW_REQUIRE_DATA(std::string("reference/quant/") + GetParam().file_stem + ".deq.f32");
  const uint32_t type = GetParam().type;
  std::vector<uint8_t> quantized = read_bytes(ref(".q"));        // [16][row_bytes]
  std::vector<float> expected = read_floats(ref(".deq.f32"));   // [16][512]
  const size_t rb = row_bytes(type);
  ASSERT_EQ(quantized.size(), kRows * rb);
  ASSERT_EQ(expected.size(), size_t{kRows * kCols});

  std::vector<float> actual(kRows * kCols);
  for (int r = 0; r < kRows; ++r) {
    dequantize_row(type, quantized.data() + r * rb, actual.data() + r * kCols, kCols);
  }
  for (int r = 0; r < kRows; ++r) {
    const float* a = actual.data() + r * kCols;
    const float* e = expected.data() + r * kCols;
    if (std::memcmp(a, e, kCols * sizeof(float)) != 0) {
      int at = 0;
      while (std::memcmp(a + at, e + at, sizeof(float)) == 0) ++at;
      ADD_FAILURE() << GetParam().file_stem << " row " << r << " column " << at << ": got "
                    << a[at] << ", ggml " << e[at];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, QuantReference, ::testing::ValuesIn(kRefTypes),
                         [](const ::testing::TestParamInfo<RefType>& info) {
                           return std::string(info.param.file_stem);
                         });

TEST(QuantReferenceIndex, IndexListsExactlyTheseTypes) {
  GGUFLOW_REQUIRE_DATA("reference/quant/index.tsv");
  std::ifstream in(test::data_path("reference/quant/index.tsv"));
  std::string line;
  std::getline(in, line);  // header
  size_t n = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::string name;
    uint32_t id, rows, cols, block_size, type_size;
    size_t bytes;
    fields >> name >> id >> rows >> cols >> block_size >> type_size >> bytes;
    ASSERT_LT(n, std::size(kRefTypes)) << "index.tsv lists an extra type " << name;
    EXPECT_EQ(name, kRefTypes[n].file_stem);
    EXPECT_EQ(id, kRefTypes[n].type) << name;
    EXPECT_EQ(rows, uint32_t{kRows});
    EXPECT_EQ(cols, uint32_t{kCols});
    EXPECT_EQ(block_size, ggml_type_info(id)->block_size) << name;
    EXPECT_EQ(type_size, ggml_type_info(id)->type_size) << name;
    EXPECT_EQ(bytes, kRows * row_bytes(id)) << name;
    ++n;
  }
  EXPECT_EQ(n, std::size(kRefTypes));
}

TEST(QuantBlocks, StructSizesMatchTypeTable) {
  EXPECT_EQ(sizeof(block_q4_0), ggml_type_info(GGML_TYPE_Q4_0)->type_size);
  EXPECT_EQ(sizeof(block_q4_1), ggml_type_info(GGML_TYPE_Q4_1)->type_size);
  EXPECT_EQ(sizeof(block_q5_0), ggml_type_info(GGML_TYPE_Q5_0)->type_size);
  EXPECT_EQ(sizeof(block_q5_1), ggml_type_info(GGML_TYPE_Q5_1)->type_size);
  EXPECT_EQ(sizeof(block_q8_0), ggml_type_info(GGML_TYPE_Q8_0)->type_size);
  EXPECT_EQ(sizeof(block_q8_1), ggml_type_info(GGML_TYPE_Q8_1)->type_size);
  EXPECT_EQ(sizeof(block_q2_K), ggml_type_info(GGML_TYPE_Q2_K)->type_size);
  EXPECT_EQ(sizeof(block_q3_K), ggml_type_info(GGML_TYPE_Q3_K)->type_size);
  EXPECT_EQ(sizeof(block_q4_K), ggml_type_info(GGML_TYPE_Q4_K)->type_size);
  EXPECT_EQ(sizeof(block_q5_K), ggml_type_info(GGML_TYPE_Q5_K)->type_size);
  EXPECT_EQ(sizeof(block_q6_K), ggml_type_info(GGML_TYPE_Q6_K)->type_size);
  EXPECT_EQ(sizeof(block_q8_K), ggml_type_info(GGML_TYPE_Q8_K)->type_size);
}

// Conversions at the edges the 16x512 fixture does not reach: subnormals, overflow, NaN, and
// exact ties (IEEE round to nearest even).
TEST(QuantBlocks, HalfAndBfloatConversionsAreIeee) {
  auto f = [](uint32_t bits) { return gguflow_f32_from_bits(bits); };
  EXPECT_EQ(gguflow_f32_to_fp16(1.0f), 0x3C00);
  EXPECT_EQ(gguflow_f32_to_fp16(-2.0f), 0xC000);
  EXPECT_EQ(gguflow_f32_to_fp16(65504.0f), 0x7BFF);
  EXPECT_EQ(gguflow_f32_to_fp16(65520.0f), 0x7C00);        // rounds up to +inf
  EXPECT_EQ(gguflow_f32_to_fp16(f(0x33800000)), 0x0001);   // 2^-24, smallest subnormal
  EXPECT_EQ(gguflow_f32_to_fp16(f(0x33000000)), 0x0000);   // 2^-25 ties to even (0)
  EXPECT_EQ(gguflow_f32_to_fp16(1.0f + 0x1.0p-11f), 0x3C00);  // tie to even
  EXPECT_EQ(gguflow_f32_to_fp16(1.0f + 0x1.8p-11f), 0x3C01);
  EXPECT_EQ(gguflow_f32_to_fp16(f(0x7FC00000)) & 0x7E00, 0x7E00);  // NaN stays NaN
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF)) continue;  // NaN payloads are not preserved
    ASSERT_EQ(gguflow_f32_to_fp16(gguflow_fp16_to_f32(static_cast<uint16_t>(h))), h) << h;
  }
  EXPECT_EQ(gguflow_fp16_to_f32(0x0001), 0x1.0p-24f);
  EXPECT_EQ(gguflow_fp16_to_f32(0x7C00), INFINITY);

  EXPECT_EQ(gguflow_f32_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(gguflow_f32_to_bf16(f(0x3F808000)), 0x3F80);  // tie, even stays
  EXPECT_EQ(gguflow_f32_to_bf16(f(0x3F818000)), 0x3F82);  // tie, odd rounds up
  EXPECT_EQ(gguflow_f32_to_bf16(f(0x7F800001)), 0x7FC0);  // signalling NaN becomes quiet
  EXPECT_EQ(gguflow_bf16_to_f32(0x3F80), 1.0f);
}

TEST(QuantDispatch, RejectsUnsupportedTypesAndPartialBlocks) {
  EXPECT_TRUE(has_dequantize_reference(GGML_TYPE_Q4_K));
  EXPECT_TRUE(has_quantize_reference(GGML_TYPE_Q8_K));
  EXPECT_FALSE(has_dequantize_reference(GGML_TYPE_IQ2_XXS));
  EXPECT_FALSE(has_quantize_reference(1000));
  float row[256] = {};
  uint8_t out[512];
  EXPECT_THROW(quantize_row(GGML_TYPE_IQ2_XXS, row, out, 256), Error);
  EXPECT_THROW(quantize_row(GGML_TYPE_Q4_K, row, out, 32), Error);
  EXPECT_THROW(dequantize_row(GGML_TYPE_Q8_0, out, row, 33), Error);
  EXPECT_EQ(quantize_row(GGML_TYPE_F32, row, out, 16), 64u);
}

}  // namespace
}  // namespace gguflow
