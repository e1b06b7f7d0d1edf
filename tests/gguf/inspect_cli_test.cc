// `gguflow inspect` as a user runs it.
#include <algorithm>
#include <fstream>

#include "tests/support/test_data.h"

namespace gguflow {
namespace {

std::string gguflow_bin() { return (test::binary_dir() / "gguflow").string(); }

TEST(InspectCli, TextReportOnRealModel) {
  GGUFLOW_REQUIRE_DATA("models/synth-qwen2-tiny-Q4_K_M.gguf");
  std::string out, err;
  int rc = test::run_command(gguflow_bin() + " inspect " +
                                 test::data_path("models/synth-qwen2-tiny-Q4_K_M.gguf").string(),
                             &out, &err);
  ASSERT_EQ(rc, 0) << err;
  EXPECT_NE(out.find("architecture:  qwen2"), std::string::npos) << out;
  EXPECT_NE(out.find("Q6_K"), std::string::npos) << out;
  EXPECT_NE(out.find("ffn_down.weight"), std::string::npos) << out;
  EXPECT_NE(out.find("output tied to token_embd"), std::string::npos) << out;
}

// Each family's positions, norm epsilon and head as its graph uses them (the reference's
// ARCHS.md / ENCODERS.md): gemma3 and nomic-bert pair rope neox-style, BERT adds learned
// positions and reads layer_norm_epsilon, and encoders have no lm-head to tie.
TEST(InspectCli, FamiliesAsTheirGraphsRunThem) {
  const std::pair<const char*, const char*> cases[] = {
      {"synth-gemma3-tiny-Q8_0.gguf", "(neox, 40 dims), rms eps 1e-06, vocab 1024, output tied to token_embd\n"},
      {"synth-nomic-bert-tiny-f32.gguf", "rope base 1000 (neox, 16 dims), layer-norm eps 1e-12, vocab 30522, encoder (bidirectional attention)\n"},
      {"synth-bert-tiny-cls-f32.gguf", "learned positions (position_embd), layer-norm eps 1e-12, vocab 30522, encoder (bidirectional attention)\n"},
      {"stories260K.gguf", "rope base 10000 (normal, 8 dims), rms eps 1e-05, vocab 512\n"}};
  for (const auto& [model, line] : cases) {
    GGUFLOW_REQUIRE_DATA(std::string("models/") + model);
    std::string out, err;
    ASSERT_EQ(test::run_command(gguflow_bin() + " inspect " + test::data_path(std::string("models/") + model).string(),
                                &out, &err), 0) << err;
    EXPECT_NE(out.find(line), std::string::npos) << model << "\n" << out;
  }
}

TEST(InspectCli, JsonHasTheDocumentedKeys) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  std::string out, err;
  int rc = test::run_command(
      gguflow_bin() + " inspect --json --tensors " + test::data_path("models/stories260K.gguf").string(),
      &out, &err);
  ASSERT_EQ(rc, 0) << err;
  for (const char* key : {"\"version\": 3", "\"architecture\": \"llama\"", "\"tensor_count\": 48",
                          "\"kv_count\": 19", "\"parameters\":", "\"file_bytes\": 1185376",
                          "\"type_mix\":", "\"F32\": 48", "\"tensors\":",
                          "\"name\": \"token_embd.weight\""})
    EXPECT_NE(out.find(key), std::string::npos) << key << "\n" << out.substr(0, 2000);
}

TEST(InspectCli, BadInputIsOneLineErrorAndNonZeroExit) {
  auto bad = test::temp_dir() / "bad.gguf";
  { std::ofstream(bad) << "not a gguf file at all"; }
  std::string out, err;
  int rc = test::run_command(gguflow_bin() + " inspect " + bad.string(), &out, &err);
  EXPECT_NE(rc, 0);
  EXPECT_NE(err.find("expected the magic \"GGUF\""), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  rc = test::run_command(gguflow_bin() + " inspect /nonexistent/model.gguf", &out, &err);
  EXPECT_NE(rc, 0);
  EXPECT_NE(err.find("cannot open"), std::string::npos) << err;
}

TEST(InspectCli, HelpIsTrue) {
  std::string out, err;
  ASSERT_EQ(test::run_command(gguflow_bin() + " inspect --help", &out, &err), 0);
  EXPECT_NE(out.find("--json"), std::string::npos);
  EXPECT_NE(out.find("--tensors"), std::string::npos);
  EXPECT_NE(test::run_command(gguflow_bin() + " inspect --bogus x", &out, &err), 0);
  EXPECT_NE(err.find("unknown option '--bogus'"), std::string::npos) << err;
}

}  // namespace
}  // namespace gguflow
