// Which graph `run`, `embed` and `lower` bind a model to, through the built binary: the shipped
// graph for the model's architecture, and a named refusal for the families no shipped graph
// implements (synth-{qwen3,gemma2,gemma3,phi3}), also when such a graph is given explicitly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/graph/graph_test_util.h"

namespace gguflow::test {
namespace {

using ::testing::HasSubstr;

struct Result {
  int status = -1;
  std::string out, err;
};

// `gguflow WORDS` (already quoted where needed) with one thread, stdin from /dev/null.
Result gguflow(const std::string& words) {
  Result r;
  r.status = run_command("env -u GGUFLOW_MODEL '" + (binary_dir() / "gguflow").string() + "' " + words + " </dev/null",
                         &r.out, &r.err);
  return r;
}

std::string model(const std::string& name) { return "'" + data_path("models/" + name).string() + "'"; }
std::string shipped(const std::string& name) { return "'" + (source_dir() / "graphs" / name).string() + "'"; }

// The three commands that bind a model to a graph, each with the graph given or not.
std::string run_words(const std::string& m, const std::string& graph = "") {
  return "run " + graph + " --threads 1 --model " + model(m) + " --prompt hi -n 2";
}
std::string embed_words(const std::string& m, const std::filesystem::path& input, const std::string& graph = "") {
  return "embed --threads 1 --model " + model(m) + " --input '" + input.string() + "'" +
         (graph.empty() ? "" : " --graph " + graph);
}
std::string lower_words(const std::string& m, const std::string& graph = "") {
  return "lower " + model(m) + (graph.empty() ? "" : " --graph " + graph);
}

constexpr const char* kShippedList =
    "decode.yaml implements llama, qwen2, mistral (generate); embed.yaml implements llama, qwen2, mistral (embed)";

class OtherFamilies : public ::testing::TestWithParam<std::string> {};

TEST_P(OtherFamilies, RefusedByEveryCommandNamingTheArchitecture) {
  const std::string file = "synth-" + GetParam() + "-tiny-f32.gguf";
  GGUFLOW_REQUIRE_DATA("models/" + file);
  const auto input = temp_dir() / "texts.txt";
  write_text(input, "hello\n");
  const std::string expected =
      "model " + file + " has architecture '" + GetParam() + "', which no shipped graph implements: ";
  for (const std::string& words : {run_words(file), embed_words(file, input), lower_words(file)}) {
    const Result r = gguflow(words);
    EXPECT_EQ(r.status, 1) << words;
    EXPECT_THAT(r.err, HasSubstr(expected)) << words;
    EXPECT_THAT(r.err, HasSubstr(kShippedList)) << words;
    EXPECT_THAT(r.err, HasSubstr("decode-lowrank-kv.yaml implements llama, qwen2, mistral")) << words;
  }
}

INSTANTIATE_TEST_SUITE_P(GraphDefaults, OtherFamilies, ::testing::Values("qwen3", "gemma2", "gemma3", "phi3"));

TEST(GraphDefaults, ExplicitGraphThatSkipsTensorsIsRefused) {
  const std::string file = "synth-qwen3-tiny-f32.gguf";
  GGUFLOW_REQUIRE_DATA("models/" + file);
  const auto input = temp_dir() / "texts.txt";
  write_text(input, "hello\n");
  for (const std::string& words : {run_words(file, shipped("decode.yaml")), lower_words(file, shipped("decode.yaml")),
                                   embed_words(file, input, shipped("embed.yaml"))}) {
    const Result r = gguflow(words);
    EXPECT_EQ(r.status, 1) << words;
    EXPECT_THAT(r.err, HasSubstr("blk.0.attn_q_norm.weight")) << words;
    EXPECT_THAT(r.err, HasSubstr("blk.0.attn_k_norm.weight")) << words;
    EXPECT_THAT(r.err, HasSubstr(" are not read by ")) << words;
    EXPECT_THAT(r.err, HasSubstr(", which implements llama, qwen2, mistral; this model is qwen3 (" + file + ")"))
        << words;
  }
}

TEST(GraphDefaults, Llama3RopeFactorsAreNotIgnored) {
  // decode.yaml has no node for rope_freqs.weight: running without it would be wrong text.
  const std::string file = "synth-llama3-tiny-f32.gguf";
  GGUFLOW_REQUIRE_DATA("models/" + file);
  const Result r = gguflow(run_words(file));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("rope_freqs.weight is not read by "));
  EXPECT_THAT(r.err, HasSubstr("this model is llama (" + file + ")"));
}

TEST(GraphDefaults, LlamaFamilyModelsRunOnTheirDefaults) {
  for (const std::string file : {"stories260K.gguf", "synth-qwen2-tiny-Q8_0.gguf", "synth-llama-tiny-Q4_0.gguf"}) {
    GGUFLOW_REQUIRE_DATA("models/" + file);
    const Result r = gguflow(run_words(file));
    EXPECT_EQ(r.status, 0) << file << ": " << r.err;
  }
  const std::string qwen = "synth-qwen2-tiny-Q8_0.gguf";
  const auto input = temp_dir() / "texts.txt";
  write_text(input, "hello\n");
  const Result e = gguflow(embed_words(qwen, input));
  EXPECT_EQ(e.status, 0) << e.err;
  EXPECT_THAT(e.out, HasSubstr("\"embedding\""));
  const Result l = gguflow(lower_words(qwen));
  EXPECT_EQ(l.status, 0) << l.err;
  EXPECT_THAT(l.out, HasSubstr("from decode.yaml for " + qwen));
}

}  // namespace
}  // namespace gguflow::test
