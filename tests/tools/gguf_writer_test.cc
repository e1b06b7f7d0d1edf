// The GGUF writer: read -> write -> read reproduces metadata (every value type, nested arrays)
// and tensor bytes of real files; v3 files with ggml's layout come back byte-identical.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/error.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_writer.h"
#include "tests/support/test_data.h"

namespace gguflow {
namespace {

// Deep equality of two metadata values; floats compared by bits (f32 values are stored as
// doubles by the reader, and must survive the round trip exactly).
bool same_value(const GgufValue& a, const GgufValue& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case GgufValueType::kString: return a.str == b.str;
    case GgufValueType::kArray:
      if (a.element_type != b.element_type || a.array_size() != b.array_size()) return false;
      for (size_t i = 0; i < a.array_size(); ++i)
        if (!same_value(a.array_item(i), b.array_item(i))) return false;
      return true;
    default: return std::memcmp(&a.number, &b.number, sizeof a.number) == 0;
  }
}

// Writes a copy of `source` through GgufWriter: all metadata, then tensor bytes streamed in
// 1000-byte pieces (pieces cross tensor boundaries on purpose).
void copy_through_writer(const GgufFile& source, const std::string& out) {
  GgufWriter writer(out, static_cast<uint32_t>(source.alignment()));
  writer.copy_metadata(source);
  for (const GgufTensorInfo& t : source.tensors()) writer.add_tensor(t.name, t.type, t.dims);
  writer.write_header();
  for (const GgufTensorInfo& t : source.tensors()) {
    auto bytes = source.tensor_bytes(t);
    for (size_t at = 0; at < bytes.size(); at += 1000)
      writer.write_tensor_data(bytes.data() + at, std::min<size_t>(1000, bytes.size() - at));
  }
  writer.finish();
}

void expect_same_contents(const GgufFile& a, const GgufFile& b) {
  ASSERT_EQ(a.metadata().size(), b.metadata().size());
  for (size_t i = 0; i < a.metadata().size(); ++i) {
    EXPECT_EQ(a.metadata()[i].key, b.metadata()[i].key);
    EXPECT_TRUE(same_value(a.metadata()[i].value, b.metadata()[i].value)) << a.metadata()[i].key;
  }
  ASSERT_EQ(a.tensors().size(), b.tensors().size());
  for (size_t i = 0; i < a.tensors().size(); ++i) {
    const GgufTensorInfo& ta = a.tensors()[i];
    const GgufTensorInfo& tb = b.tensors()[i];
    EXPECT_EQ(ta.name, tb.name);
    EXPECT_EQ(ta.type, tb.type) << ta.name;
    EXPECT_EQ(ta.dims, tb.dims) << ta.name;
    auto ba = a.tensor_bytes(ta), bb = b.tensor_bytes(tb);
    ASSERT_EQ(ba.size(), bb.size()) << ta.name;
    EXPECT_EQ(std::memcmp(ba.data(), bb.data(), ba.size()), 0) << ta.name;
  }
}

std::vector<char> file_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

class GgufRoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(GgufRoundTrip, ReadWriteReadIsIdentical) {
  GGUFLOW_REQUIRE_DATA(GetParam());
  auto source = GgufFile::open(test::data_path(GetParam()).string());
  const std::string out = (test::temp_dir() / "copy.gguf").string();
  copy_through_writer(*source, out);
  EXPECT_FALSE(test::has_temporary_of(out));
  auto copy = GgufFile::open(out);
  EXPECT_EQ(copy->version(), 3u);
  expect_same_contents(*source, *copy);
  // A v3 file written by ggml has exactly our layout, so the copy is the same bytes.
  if (source->version() == 3) {
    EXPECT_TRUE(file_bytes(test::data_path(GetParam())) == file_bytes(out))
        << "v3 copy differs from the original bytes";
  }
}

INSTANTIATE_TEST_SUITE_P(
    RealFiles, GgufRoundTrip,
    ::testing::Values("models/stories260K.gguf", "models/stories260K-v1.gguf",
                      "models/stories260K-Q4_0.gguf", "models/llama-2-tiny-random.gguf",
                      "models/synth-llama-tiny-f32.gguf", "models/synth-qwen2-tiny-Q4_K_M.gguf",
                      "models/synth-llama-tiny-Q2_K.gguf", "vocab/ggml-vocab-qwen2.gguf",
                      "vocab/ggml-vocab-llama-spm.gguf", "vocab/ggml-vocab-bert-bge.gguf"),
    [](const ::testing::TestParamInfo<const char*>& info) {
      std::string name = std::filesystem::path(info.param).stem().string();
      for (char& c : name)
        if (!isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });

TEST(GgufWriter, WritesEveryValueTypeAndNestedArrays) {
  const std::string out = (test::temp_dir() / "values.gguf").string();
  {
    GgufWriter w(out, 64);
    w.set_u8("u8", 200);
    w.set_i8("i8", -100);
    w.set_u16("u16", 60000);
    w.set_i16("i16", -30000);
    w.set_u32("u32", 4000000000u);
    w.set_i32("i32", -2000000000);
    w.set_u64("u64", 18000000000000000000ull);
    w.set_i64("i64", -9000000000000000000ll);
    w.set_f32("f32", 0.1f);
    w.set_f64("f64", 0.1);
    w.set_bool("bool", true);
    w.set_string("str", std::string("a\0b", 3));
    std::vector<std::string> strs = {"x", "", "zz"};
    w.set_string_array("strs", strs);
    std::vector<float> floats = {1.5f, -2.25f};
    w.set_f32_array("floats", floats);
    GgufValue nested;  // [[1, 2], []] of i32
    nested.type = GgufValueType::kArray;
    nested.element_type = GgufValueType::kArray;
    for (int n : {2, 0}) {
      GgufValue inner;
      inner.type = GgufValueType::kArray;
      inner.element_type = GgufValueType::kI32;
      for (int k = 1; k <= n; ++k) {
        GgufValue v;
        v.type = GgufValueType::kI32;
        v.number.i64 = k;
        inner.items.push_back(v);
      }
      nested.items.push_back(inner);
    }
    w.set("nested", nested);
    EXPECT_THROW(w.set_u32("u32", 1), Error);  // keys are unique
    const uint64_t dims[] = {64, 3};
    w.add_tensor("t", GGML_TYPE_Q8_0, dims);
    const uint64_t dims1[] = {5};
    w.add_tensor("bias", GGML_TYPE_F32, dims1);
    const uint64_t bad[] = {33, 1};
    EXPECT_THROW(w.add_tensor("bad", GGML_TYPE_Q8_0, bad), Error);
    w.write_header();
    std::vector<uint8_t> q8(3 * 2 * 34, 7);
    w.write_tensor_data(q8.data(), q8.size());
    float bias[5] = {1, 2, 3, 4, 5};
    w.write_tensor_data(bias, sizeof bias);
    EXPECT_THROW(w.write_tensor_data(bias, 1), Error);  // beyond the last tensor
    w.finish();
  }
  auto f = GgufFile::open(out);
  EXPECT_EQ(f->alignment(), 64u);
  EXPECT_EQ(f->get("u8").as_int(), 200);
  EXPECT_EQ(f->get("i8").as_int(), -100);
  EXPECT_EQ(f->get("u16").as_int(), 60000);
  EXPECT_EQ(f->get("i16").as_int(), -30000);
  EXPECT_EQ(f->get("u32").as_int(), 4000000000);
  EXPECT_EQ(f->get("i32").as_int(), -2000000000);
  EXPECT_EQ(f->get("u64").number.u64, 18000000000000000000ull);
  EXPECT_EQ(f->get("i64").as_int(), -9000000000000000000ll);
  EXPECT_EQ(f->get("f32").type, GgufValueType::kF32);
  EXPECT_EQ(static_cast<float>(f->get("f32").as_double()), 0.1f);
  EXPECT_EQ(f->get("f64").as_double(), 0.1);
  EXPECT_TRUE(f->get("bool").as_bool());
  EXPECT_EQ(f->get("str").as_string(), std::string_view("a\0b", 3));
  EXPECT_EQ(f->get("strs").as_string_array(), (std::vector<std::string_view>{"x", "", "zz"}));
  EXPECT_EQ(f->get("floats").as_double_array(), (std::vector<double>{1.5, -2.25}));
  const auto& nested = f->get("nested").as_array();
  ASSERT_EQ(nested.size(), 2u);
  EXPECT_EQ(nested[0].as_int_array(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(nested[1].array_size(), 0u);
  EXPECT_EQ(f->tensor("t").offset, 0u);
  EXPECT_EQ(f->tensor("bias").offset, 256u);  // 204 bytes padded to 64
  EXPECT_EQ(f->data_offset() % 64, 0u);
  auto b = f->tensor_bytes(f->tensor("bias"));
  const float expected_bias[5] = {1, 2, 3, 4, 5};
  EXPECT_EQ(std::memcmp(b.data(), expected_bias, sizeof expected_bias), 0);
}

TEST(GgufWriter, IncompleteFileIsNeverRenamed) {
  const std::string out = (test::temp_dir() / "partial.gguf").string();
  {
    GgufWriter w(out);
    const uint64_t dims[] = {32};
    w.add_tensor("t", GGML_TYPE_F32, dims);
    w.write_header();
    float half[16] = {};
    w.write_tensor_data(half, sizeof half);
    EXPECT_TRUE(test::has_temporary_of(out));
    EXPECT_THROW(w.finish(), Error);
  }
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(test::has_temporary_of(out));
}

TEST(GgufWriter, UnwritablePathIsAClearError) {
  try {
    GgufWriter w("/nonexistent-dir/x.gguf");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.gguf: cannot create the output"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gguflow
