// The `gguflow quantize`, `synth` and `tensor` commands as a user runs them: output, exit
// status and one-line errors for bad input.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/gguf/gguf_file.h"
#include "runtime/quant/quant.h"
#include "tests/support/test_data.h"

namespace gguflow {
namespace {

std::string gguflow_cmd(const std::string& args) { return (test::binary_dir() / "gguflow").string() + " " + args; }

// The quoted path of a shared model file.
std::string model(const char* name) {
  std::string quoted = "'";
  quoted += test::data_path(std::string("models/") + name).string();
  quoted += "'";
  return quoted;
}

TEST(QuantizeCli, PrintsTheTypeMixAndWritesTheFile) {
  GGUFLOW_REQUIRE_DATA("models/synth-qwen2-tiny-f32.gguf");
  const std::string out = (test::temp_dir() / "q.gguf").string();
  std::string stdout_text, stderr_text;
  ASSERT_EQ(test::run_command(gguflow_cmd("quantize " + model("synth-qwen2-tiny-f32.gguf") + " " + out + " Q4_K_M"),
                              &stdout_text, &stderr_text), 0) << stderr_text;
  EXPECT_NE(stderr_text.find("type mix: F32 x11, Q5_0 x11, Q8_0 x2, Q4_K x1, Q6_K x1"), std::string::npos) << stderr_text;
  EXPECT_EQ(stdout_text, "");  // notices go to stderr (docs/CLI.md rule 1)
  EXPECT_TRUE(std::filesystem::exists(out));
  EXPECT_FALSE(test::has_temporary_of(out));
}

TEST(QuantizeCli, BadInputGivesOneLineErrors) {
  GGUFLOW_REQUIRE_DATA("models/stories260K-Q4_0.gguf");
  const std::string out = (test::temp_dir() / "q.gguf").string();
  std::string err;
  EXPECT_EQ(test::run_command(gguflow_cmd("quantize " + model("stories260K.gguf") + " " + out + " Q4_XL"), nullptr, &err), 2);
  EXPECT_NE(err.find("unknown TYPE 'Q4_XL'"), std::string::npos) << err;
  EXPECT_EQ(test::run_command(gguflow_cmd("quantize " + model("stories260K-Q4_0.gguf") + " " + out + " Q8_0"), nullptr, &err), 1);
  EXPECT_NE(err.find("already quantized"), std::string::npos) << err;
  EXPECT_EQ(test::run_command(gguflow_cmd("quantize " + model("stories260K.gguf") + " /nonexistent-dir/q.gguf Q8_0"), nullptr, &err), 1);
  EXPECT_NE(err.find("/nonexistent-dir/q.gguf: cannot create the output"), std::string::npos) << err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(SynthCli, ExplicitShapeFlags) {
  const std::string out = (test::temp_dir() / "s.gguf").string();
  std::string stdout_text, err;
  ASSERT_EQ(test::run_command(gguflow_cmd("synth --arch llama --n-embd 256 --n-layer 2 --n-head 4 --n-head-kv 2 "
                                          "--n-ff 512 --n-vocab 400 --type Q4_K_M --seed 3 -o " + out),
                              &stdout_text, &err), 0) << err;
  EXPECT_NE(err.find("type mix:"), std::string::npos) << err;
  EXPECT_EQ(stdout_text, "");
  auto f = GgufFile::open(out);
  EXPECT_EQ(f->get("llama.attention.head_count_kv").as_int(), 2);
  EXPECT_STREQ(f->tensor("output.weight").type_name(), "Q6_K");
  EXPECT_STREQ(f->tensor("blk.1.attn_v.weight").type_name(), "Q6_K");
  EXPECT_STREQ(f->tensor("blk.0.attn_v.weight").type_name(), "Q4_K");
  EXPECT_EQ(test::run_command(gguflow_cmd("synth --preset nope -o " + out), nullptr, &err), 2);  // usage
  EXPECT_NE(err.find("unknown --preset 'nope'"), std::string::npos) << err;
}

std::vector<float> read_f32(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}

TEST(TensorCli, RowRangesOfF32AndQ8_0Tensors) {
  GGUFLOW_REQUIRE_DATA("models/stories260K-Q8_0.gguf");
  auto f32 = GgufFile::open(test::data_path("models/stories260K.gguf").string());
  auto q8 = GgufFile::open(test::data_path("models/stories260K-Q8_0.gguf").string());
  const std::string out = (test::temp_dir() / "t.f32").string();
  std::string err;

  // F32: exactly the stored floats of rows 3..5 (64 values per row).
  ASSERT_EQ(test::run_command(gguflow_cmd("tensor " + model("stories260K.gguf") + " token_embd.weight --rows 3:6 --out " + out), nullptr, &err), 0) << err;
  std::vector<float> got = read_f32(out);
  const GgufTensorInfo& t = f32->tensor("token_embd.weight");
  ASSERT_EQ(got.size(), 3u * 64u);
  EXPECT_EQ(std::memcmp(got.data(), f32->tensor_bytes(t).data() + 3 * 64 * 4, got.size() * 4), 0);

  // Q8_0: the reference decoding, close to the F32 original.
  ASSERT_EQ(test::run_command(gguflow_cmd("tensor " + model("stories260K-Q8_0.gguf") + " token_embd.weight --rows 3:6 --out " + out), nullptr, &err), 0) << err;
  std::vector<float> deq = read_f32(out);
  const GgufTensorInfo& tq = q8->tensor("token_embd.weight");
  std::vector<float> expected(3 * 64);
  for (int r = 0; r < 3; ++r)
    dequantize_row(tq.type, q8->tensor_bytes(tq).data() + (3 + r) * tq.row_bytes(), expected.data() + r * 64, 64);
  ASSERT_EQ(deq.size(), expected.size());
  EXPECT_EQ(std::memcmp(deq.data(), expected.data(), deq.size() * 4), 0);
  for (size_t i = 0; i < deq.size(); ++i) EXPECT_NEAR(deq[i], got[i], 0.01f) << i;

  std::string printed;
  ASSERT_EQ(test::run_command(gguflow_cmd("tensor " + model("stories260K.gguf") + " output_norm.weight --print"), &printed, &err), 0) << err;
  EXPECT_EQ(std::count(printed.begin(), printed.end(), '\n'), 1);

  // An option value out of its range (the tensor's 512 rows): a usage error, exit 2.
  EXPECT_EQ(test::run_command(gguflow_cmd("tensor " + model("stories260K.gguf") + " token_embd.weight --rows 5:600"), nullptr, &err), 2);
  EXPECT_NE(err.find("--rows '5:600'"), std::string::npos) << err;
  EXPECT_EQ(test::run_command(gguflow_cmd("tensor " + model("stories260K.gguf") + " no.such.tensor"), nullptr, &err), 1);
  EXPECT_NE(err.find("no.such.tensor"), std::string::npos) << err;
}

// ---- hardening (issue 23): outputs are never truncated before the write succeeds -------------

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// Runs `args` with a 16 KiB file-size limit (SIGXFSZ ignored, so a write past it fails with
// EFBIG), over a destination holding "previous result": the write must fail with exit 1 and
// leave the previous file and no temporary.
void expect_failed_write_keeps_old_file(const std::string& args, const std::filesystem::path& dest) {
  { std::ofstream(dest, std::ios::binary) << "previous result"; }
  std::string err;
  const std::string inner = "trap '' XFSZ; ulimit -f 16; " + gguflow_cmd(args);
  EXPECT_EQ(test::run_command("bash -c \"" + inner + "\"", nullptr, &err), 1) << err;
  EXPECT_NE(err.find(dest.string() + ": write failed"), std::string::npos) << err;
  EXPECT_EQ(read_all(dest), "previous result");
  EXPECT_FALSE(test::has_temporary_of(dest));
}

TEST(OutputHardening, TensorOutFailureKeepsThePreviousFile) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  const auto dest = test::temp_dir() / "embd.f32";  // token_embd is 128 KiB of f32
  expect_failed_write_keeps_old_file("tensor " + model("stories260K.gguf") + " token_embd.weight --out " + dest.string(), dest);
}

TEST(OutputHardening, DumpLogitsFailureKeepsThePreviousFile) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  const auto dest = test::temp_dir() / "logits.f32";  // 20 positions x 512 f32 = 40 KiB
  expect_failed_write_keeps_old_file("run --threads 1 --model " + model("stories260K.gguf") +
                                         " --tokens 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20 --dump-logits " +
                                         dest.string(),
                                     dest);
}

}  // namespace
}  // namespace gguflow
