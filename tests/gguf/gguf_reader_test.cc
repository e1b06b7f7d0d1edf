// Real files: every model and vocabulary in shared/data parses with the expected counts, and the
// tensor table agrees with the independent listing in reference/typemix.
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#include "ops/error.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_names.h"
#include "runtime/gguf/model_hparams.h"
#include "tests/support/test_data.h"

namespace gguflow {
namespace {

struct ExpectedCounts {
  const char* path;
  uint32_t version;
  size_t n_tensors;
  size_t n_kv;
};

// Counts as written in each file's header (read with a separate 10-line script).
const ExpectedCounts kFiles[] = {
    {"models/llama-2-tiny-random.gguf", 3, 12, 18},
    {"models/stories260K-Q4_0.gguf", 3, 48, 21},
    {"models/stories260K-Q8_0.gguf", 3, 48, 21},
    {"models/stories260K-v1.gguf", 1, 48, 18},
    {"models/stories260K.gguf", 3, 48, 19},
    {"models/synth-llama-tiny-Q2_K.gguf", 3, 21, 24},
    {"models/synth-llama-tiny-Q3_K_M.gguf", 3, 21, 24},
    {"models/synth-llama-tiny-Q4_0.gguf", 3, 21, 24},
    {"models/synth-llama-tiny-Q4_K_M.gguf", 3, 21, 24},
    {"models/synth-llama-tiny-Q5_K_M.gguf", 3, 21, 24},
    {"models/synth-llama-tiny-Q6_K.gguf", 3, 21, 24},
    {"models/synth-llama-tiny-f32.gguf", 3, 21, 23},
    {"models/synth-qwen2-tiny-Q4_K_M.gguf", 3, 26, 21},
    {"models/synth-qwen2-tiny-Q8_0.gguf", 3, 26, 21},
    {"models/synth-qwen2-tiny-f32.gguf", 3, 26, 20},
    {"vocab/ggml-vocab-bert-bge.gguf", 3, 0, 20},
    {"vocab/ggml-vocab-gpt-2.gguf", 3, 0, 16},
    {"vocab/ggml-vocab-llama-spm.gguf", 3, 0, 22},
    {"vocab/ggml-vocab-qwen2.gguf", 3, 0, 20},
};

void PrintTo(const ExpectedCounts& e, std::ostream* out) { *out << e.path; }

// Models with an independent tensor listing in reference/typemix/<model>.txt.
const char* kTypemixModels[] = {
    "stories260K",           "stories260K-Q4_0",         "stories260K-Q8_0",
    "synth-llama-tiny-Q2_K", "synth-llama-tiny-Q3_K_M",  "synth-llama-tiny-Q4_0",
    "synth-llama-tiny-Q4_K_M", "synth-llama-tiny-Q5_K_M", "synth-llama-tiny-Q6_K",
    "synth-llama-tiny-f32",  "synth-qwen2-tiny-Q4_K_M",  "synth-qwen2-tiny-Q8_0",
    "synth-qwen2-tiny-f32",
};

class RealFile : public ::testing::TestWithParam<ExpectedCounts> {};
class TypemixListing : public ::testing::TestWithParam<const char*> {};

TEST_P(RealFile, ParsesWithExpectedCounts) {
  const ExpectedCounts& e = GetParam();
  GGUFLOW_REQUIRE_DATA(e.path);
  auto file = GgufFile::open(test::data_path(e.path).string());
  EXPECT_EQ(file->version(), e.version);
  EXPECT_EQ(file->tensors().size(), e.n_tensors);
  EXPECT_EQ(file->metadata().size(), e.n_kv);
  for (const auto& t : file->tensors()) {
    auto bytes = file->tensor_bytes(t);
    EXPECT_GE(bytes.data(), file->tensors().empty() ? nullptr : bytes.data());
    EXPECT_LE(file->data_offset() + t.offset + bytes.size(), file->file_bytes()) << t.name;
  }
}

// Reads "  name  [ne0, ne1]  TYPE  bytes B" lines of reference/typemix/<model>.txt.
struct TypemixRow {
  std::string name, type;
  std::vector<uint64_t> dims;
  uint64_t bytes;
};

std::vector<TypemixRow> read_typemix(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::vector<TypemixRow> rows;
  std::regex row_re(R"(^\s+(\S+)\s+\[([0-9, ]+)\]\s+(\S+)\s+([0-9]+) B$)");
  std::smatch m;
  while (std::getline(in, line)) {
    if (!std::regex_match(line, m, row_re)) continue;
    TypemixRow row{m[1], m[3], {}, std::stoull(m[4])};
    std::stringstream dims(m[2].str());
    std::string d;
    while (std::getline(dims, d, ',')) row.dims.push_back(std::stoull(d));
    rows.push_back(row);
  }
  return rows;
}

TEST_P(TypemixListing, TensorTableMatchesReference) {
  std::string model = GetParam();
  std::string typemix = "reference/typemix/" + model + ".txt";
  GGUFLOW_REQUIRE_DATA(typemix);
  GGUFLOW_REQUIRE_DATA("models/" + model + ".gguf");
  auto file = GgufFile::open(test::data_path("models/" + model + ".gguf").string());
  auto rows = read_typemix(test::data_path(typemix));
  ASSERT_EQ(rows.size(), file->tensors().size());
  for (const auto& row : rows) {
    const GgufTensorInfo* t = file->find_tensor(row.name);
    ASSERT_NE(t, nullptr) << row.name;
    EXPECT_EQ(t->type_name(), row.type) << row.name;
    EXPECT_EQ(t->dims, row.dims) << row.name;
    EXPECT_EQ(t->n_bytes(), row.bytes) << row.name;
  }
}

INSTANTIATE_TEST_SUITE_P(SharedData, RealFile, ::testing::ValuesIn(kFiles),
                         [](const auto& info) {
                           std::string n = info.param.path;
                           for (auto& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });
INSTANTIATE_TEST_SUITE_P(SharedData, TypemixListing, ::testing::ValuesIn(kTypemixModels),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (auto& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(GgufReader, V1FileHasTheSameTensorsAsV3) {
  GGUFLOW_REQUIRE_DATA("models/stories260K-v1.gguf");
  auto v1 = GgufFile::open(test::data_path("models/stories260K-v1.gguf").string());
  auto v3 = GgufFile::open(test::data_path("models/stories260K.gguf").string());
  ASSERT_EQ(v1->tensors().size(), v3->tensors().size());
  for (const auto& t : v3->tensors()) {
    const GgufTensorInfo& t1 = v1->tensor(t.name);
    EXPECT_EQ(t1.dims, t.dims);
    auto a = v1->tensor_bytes(t1), b = v3->tensor_bytes(t);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size())) << t.name;
  }
  EXPECT_EQ(v1->get("llama.context_length").as_int(), 512);
  EXPECT_EQ(v3->get("llama.context_length").as_int(), 2048);
}

TEST(GgufReader, RejectsRowsNotAMultipleOfTheBlockSize) {
  GGUFLOW_REQUIRE_DATA("models/stories260K-q8_0-v2-unaligned.gguf");
  std::string path = test::data_path("models/stories260K-q8_0-v2-unaligned.gguf").string();
  try {
    GgufFile::open(path);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find(path), std::string::npos) << m;
    EXPECT_NE(m.find("ffn_down.weight"), std::string::npos) << m;
    EXPECT_NE(m.find("row length 172 is not a multiple of the Q8_0 block size 32"), std::string::npos) << m;
  }
}

TEST(GgufReader, TokenizerKeysBeforeArchitectureAndHparamDefaults) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  auto file = GgufFile::open(test::data_path("models/stories260K.gguf").string());
  EXPECT_EQ(file->metadata().front().key.rfind("tokenizer.", 0), 0u);
  ModelHparams h = read_model_hparams(*file);
  EXPECT_EQ(h.architecture, "llama");
  EXPECT_EQ(h.n_layer, 5);
  EXPECT_EQ(h.n_embd, 64);
  EXPECT_EQ(h.n_head, 8);
  EXPECT_EQ(h.n_head_kv, 4);
  EXPECT_EQ(h.head_dim, 8);
  EXPECT_EQ(h.n_ff, 172);
  EXPECT_EQ(h.n_vocab, 512);
  EXPECT_EQ(h.rope_freq_base, 10000.0);  // key absent: llama default
  EXPECT_FALSE(h.rope_neox);
  EXPECT_FALSE(h.tied_output);
  auto tokens = file->get("tokenizer.ggml.tokens").as_string_array();
  ASSERT_EQ(tokens.size(), 512u);
  EXPECT_EQ(tokens[1], "<s>");
}

TEST(GgufReader, QwenHparams) {
  GGUFLOW_REQUIRE_DATA("models/synth-qwen2-tiny-Q4_K_M.gguf");
  auto file = GgufFile::open(test::data_path("models/synth-qwen2-tiny-Q4_K_M.gguf").string());
  ModelHparams h = read_model_hparams(*file);
  EXPECT_EQ(h.architecture, "qwen2");
  EXPECT_TRUE(h.rope_neox);
  EXPECT_TRUE(h.tied_output);
  EXPECT_NE(file->find_tensor("blk.0.attn_q.bias"), nullptr);
}

TEST(GgufNames, ExpandAndRole) {
  EXPECT_EQ(names::expand(names::kBlockCount, "qwen2"), "qwen2.block_count");
  EXPECT_EQ(names::expand(names::kAttnV, "llama", 7), "blk.7.attn_v.weight");
  auto role = names::tensor_role("blk.12.ffn_down.weight");
  EXPECT_EQ(role.role, "ffn_down.weight");
  EXPECT_EQ(role.layer, 12);
  EXPECT_EQ(names::tensor_role("output.weight").layer, -1);
}

}  // namespace
}  // namespace gguflow
