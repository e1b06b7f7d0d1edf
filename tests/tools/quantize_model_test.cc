// `quantize_model` against llama-quantize's own output (shared/data/models/synth-*-<TYPE>.gguf,
// DATA.md section 3): same type per tensor, same tensor bytes, and in fact the same file.
#include <cstring>
#include <filesystem>
#include <functional>
#include <utility>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/error.h"
#include "plugins/abi/ggml_type.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_writer.h"
#include "runtime/quant/quant.h"
#include "runtime/tools/quant_mix.h"
#include "runtime/tools/quantize_model.h"
#include "tests/support/edited_model.h"
#include "tests/support/test_data.h"

namespace gguflow {
namespace {

struct Case {
  const char* source;     // F32 model in models/
  const char* type;       // TYPE argument
  const char* reference;  // llama-quantize's output in models/
  // Made by llama-quantize itself (not by DATA.md's requant_gguf), so the whole file matches.
  bool whole_file_identical = true;
};

std::vector<char> file_bytes(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

class QuantizeMatchesLlamaQuantize : public ::testing::TestWithParam<Case> {};

TEST_P(QuantizeMatchesLlamaQuantize, SameTypesAndBytes) {
  const Case& c = GetParam();
  GGUFLOW_REQUIRE_DATA(std::string("models/") + c.source);
  GGUFLOW_REQUIRE_DATA(std::string("models/") + c.reference);
  const std::string out = (test::temp_dir() / "out.gguf").string();
  quantize_model(test::data_path(std::string("models/") + c.source).string(), out, c.type);

  auto ours = GgufFile::open(out);
  auto ref = GgufFile::open(test::data_path(std::string("models/") + c.reference).string());
  ASSERT_EQ(ours->tensors().size(), ref->tensors().size());
  for (const GgufTensorInfo& r : ref->tensors()) {
    const GgufTensorInfo* o = ours->find_tensor(r.name);
    ASSERT_NE(o, nullptr) << r.name;
    EXPECT_STREQ(o->type_name(), r.type_name()) << r.name;
    if (o->type != r.type) continue;
    EXPECT_EQ(o->dims, r.dims) << r.name;
    auto ob = ours->tensor_bytes(*o), rb = ref->tensor_bytes(r);
    ASSERT_EQ(ob.size(), rb.size()) << r.name;
    EXPECT_EQ(std::memcmp(ob.data(), rb.data(), ob.size()), 0) << r.name << " bytes differ";
  }
  EXPECT_EQ(ours->get("general.file_type").as_int(), ref->get("general.file_type").as_int());
  // Same tensor order, metadata order and layout as llama-quantize: the files are identical.
  if (c.whole_file_identical) {
    EXPECT_TRUE(file_bytes(out) == file_bytes(ref->path())) << "file differs from " << c.reference;
  }
}

INSTANTIATE_TEST_SUITE_P(
    SynthModels, QuantizeMatchesLlamaQuantize,
    ::testing::Values(Case{"synth-llama-tiny-f32.gguf", "Q4_K_M", "synth-llama-tiny-Q4_K_M.gguf"},
                      Case{"synth-llama-tiny-f32.gguf", "Q6_K", "synth-llama-tiny-Q6_K.gguf"},
                      Case{"synth-llama-tiny-f32.gguf", "Q4_0", "synth-llama-tiny-Q4_0.gguf"},
                      Case{"synth-llama-tiny-f32.gguf", "Q5_K_M", "synth-llama-tiny-Q5_K_M.gguf"},
                      Case{"synth-llama-tiny-f32.gguf", "Q3_K_M", "synth-llama-tiny-Q3_K_M.gguf"},
                      Case{"synth-llama-tiny-f32.gguf", "Q2_K", "synth-llama-tiny-Q2_K.gguf"},
                      Case{"synth-qwen2-tiny-f32.gguf", "Q4_K_M", "synth-qwen2-tiny-Q4_K_M.gguf"},
                      Case{"synth-qwen2-tiny-f32.gguf", "Q8_0", "synth-qwen2-tiny-Q8_0.gguf"},
                      Case{"stories260K.gguf", "Q8_0", "stories260K-Q8_0.gguf", false},
                      Case{"stories260K.gguf", "Q4_0", "stories260K-Q4_0.gguf", false}),
    [](const ::testing::TestParamInfo<Case>& info) {
      std::string name = std::string(info.param.reference);
      name = name.substr(0, name.size() - 5);
      for (char& ch : name)
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name;
    });

TEST(QuantMix, MoreBitsLayersOfA24LayerModel) {
  std::vector<int> layers;
  for (int i = 0; i < 24; ++i)
    if (more_bits_layer(i, 24)) layers.push_back(i);
  EXPECT_EQ(layers, (std::vector<int>{0, 1, 2, 5, 8, 11, 14, 17, 20, 21, 22, 23}));
}

TEST(QuantMix, TensorOrderIsByBlockNumberNotText) {
  std::vector<std::string> names = {"blk.10.a.weight", "token_embd.weight", "blk.2.b.weight",
                                    "blk.2.a.weight", "output.weight"};
  std::vector<size_t> order = llama_tensor_order(names);
  std::vector<std::string> sorted;
  for (size_t i : order) sorted.push_back(names[i]);
  EXPECT_EQ(sorted, (std::vector<std::string>{"output.weight", "token_embd.weight", "blk.2.a.weight",
                                              "blk.2.b.weight", "blk.10.a.weight"}));
}

// TYPE F32 of a quantized model dequantizes it: every tensor F32, holding the reference
// dequantization of the source rows (ggml's to_float bits, tests/quant), metadata kept but the
// file type. Used to compare a quantized model's exact product with a runtime's
// (docs/ADDING_A_FAMILY.md, "Quantized fixtures").
TEST(QuantizeModel, F32DequantizesAQuantizedModel) {
  GGUFLOW_REQUIRE_DATA("models/synth-qwen2-tiny-Q4_K_M.gguf");
  const std::string in = test::data_path("models/synth-qwen2-tiny-Q4_K_M.gguf").string();
  const std::string out = (test::temp_dir() / "deq.gguf").string();
  quantize_model(in, out, "F32");
  auto src = GgufFile::open(in);
  auto deq = GgufFile::open(out);
  ASSERT_EQ(deq->tensors().size(), src->tensors().size());
  for (const GgufTensorInfo& t : src->tensors()) {
    const GgufTensorInfo* d = deq->find_tensor(t.name);
    ASSERT_NE(d, nullptr) << t.name;
    EXPECT_EQ(d->type, uint32_t{GGML_TYPE_F32}) << t.name;
    EXPECT_EQ(d->dims, t.dims) << t.name;
    std::vector<float> want(t.row_length() * t.n_rows());
    const auto bytes = src->tensor_bytes(t);
    const size_t row = bytes.size() / t.n_rows();
    for (uint64_t r = 0; r < t.n_rows(); ++r)
      dequantize_row(t.type, bytes.data() + r * row, want.data() + r * t.row_length(), static_cast<int64_t>(t.row_length()));
    const auto got = deq->tensor_bytes(*d);
    ASSERT_EQ(got.size(), want.size() * sizeof(float)) << t.name;
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size()), 0) << t.name;
  }
  EXPECT_EQ(deq->get("general.architecture").as_string(), src->get("general.architecture").as_string());
}

TEST(QuantizeModel, RejectsUnknownTypeAndQuantizedInput) {
  GGUFLOW_REQUIRE_DATA("models/stories260K-Q8_0.gguf");
  const std::string out = (test::temp_dir() / "x.gguf").string();
  try {
    quantize_model(test::data_path("models/stories260K.gguf").string(), out, "Q7_Z");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Q4_K_M"), std::string::npos) << e.what();
  }
  try {
    quantize_model(test::data_path("models/stories260K-Q8_0.gguf").string(), out, "Q4_0");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("already quantized"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(test::has_temporary_of(out));
}

// A tensor no reference codec reads was found mid-file, the error naming neither file nor tensor.
TEST(QuantizeModel, ATypeWithoutACodecIsNamedBeforeWriting) {
  const std::string path = (test::temp_dir() / "ids.gguf").string();
  {
    GgufWriter w(path);
    w.set_string("general.architecture", "llama");
    const std::vector<uint64_t> dims = {8};
    w.add_tensor("ids", GGML_TYPE_I32, dims);
    w.write_header();
    const std::vector<int32_t> ids(8, 3);
    w.write_tensor_data(ids.data(), ids.size() * sizeof(int32_t));
    w.finish();
  }
  const std::string out = (test::temp_dir() / "ids-f32.gguf").string();
  try {
    quantize_model(path, out, "F32");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": tensor 'ids' is I32: no reference codec converts it to F32"),
              std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(test::has_temporary_of(out));
}

// The layer count chooses the type mix: 2^40 became 0 layers as an int, -1 was taken.
TEST(QuantizeModel, RejectsLayerCountsThatAreNoCount) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  const auto source = GgufFile::open(test::data_path("models/stories260K.gguf").string());
  const std::string out = (test::temp_dir() / "y.gguf").string();
  const auto edited = [&](const char* name, const std::function<void(GgufWriter&)>& set) {
    const auto path = test::temp_dir() / name;
    test::write_edited_model(*source, path, {"llama.block_count"}, set);
    return path.string();
  };
  const std::string huge = edited("huge.gguf", [](GgufWriter& w) { w.set_u64("llama.block_count", uint64_t{1} << 40); });
  const std::string negative = edited("neg.gguf", [](GgufWriter& w) { w.set_i32("llama.block_count", -1); });
  for (const auto& [path, expected] : {std::pair{huge, "a layer or head count of 1099511627776"},
                                       std::pair{negative, "metadata 'llama.block_count': expected a positive integer"}}) {
    try {
      quantize_model(path, out, "Q8_0");
      ADD_FAILURE() << path;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace gguflow
