// Which graph `run`, `embed` and `lower` bind a model to, through the built binary: the shipped
// graph for the model's architecture and job, and a named refusal where no shipped graph
// implements them (encoders for run and lower; decoder families for embed), also for a graph given explicitly
// that leaves tensors unread.
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

// Families no shipped graph implements for a job are refused by every command of that job,
// naming the architecture and listing what each shipped graph implements.
void expect_refused(const Result& r, const std::string& file, const std::string& arch,
                    const std::string& why, const std::string& words) {
  EXPECT_EQ(r.status, 1) << words;
  EXPECT_THAT(r.err, HasSubstr("model " + file + " has architecture '" + arch + "', " + why)) << words;
  EXPECT_THAT(r.err, HasSubstr("decode.yaml implements llama, qwen2, mistral (generate)")) << words;
  EXPECT_THAT(r.err, HasSubstr("embed.yaml implements llama, qwen2, mistral (embed)")) << words;
  EXPECT_THAT(r.err, HasSubstr("qwen3.yaml implements qwen3 (generate)")) << words;
  EXPECT_THAT(r.err, HasSubstr("decode-lowrank-kv.yaml implements llama, qwen2, mistral")) << words;
}

// Encoders: `embed` binds their own graph (graphs/bert.yaml, nomic-bert.yaml, job: embed); they
// have no generate graph, so run and lower are refused naming the architecture and the job.
class Encoders : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(Encoders, EmbedUsesTheirGraphRunAndLowerAreRefused) {
  const auto& [file, arch] = GetParam();
  GGUFLOW_REQUIRE_DATA("models/" + file);
  const auto input = temp_dir() / "texts.txt";
  write_text(input, "hello\n");
  const Result embed = gguflow(embed_words(file, input) + " --verbose");
  EXPECT_EQ(embed.status, 0) << embed.err;
  EXPECT_THAT(embed.err, HasSubstr("graph " + arch + ": ")) << embed.err;
  EXPECT_THAT(embed.out, HasSubstr("{\"index\": 0, \"embedding\": [")) << embed.out;
  for (const std::string& words : {run_words(file), lower_words(file)})
    expect_refused(gguflow(words), file, arch, "for which no shipped graph has job: generate: ", words);
}

INSTANTIATE_TEST_SUITE_P(GraphDefaults, Encoders,
                         ::testing::Values(std::make_pair("synth-bert-tiny-cls-f32.gguf", "bert"),
                                           std::make_pair("synth-nomic-bert-tiny-f32.gguf", "nomic-bert")));

// The decoder families have generate graphs of their own (graphs/<family>.yaml) but no embed
// graph: run and lower bind them, embed refuses them.
class DecoderFamilies : public ::testing::TestWithParam<std::string> {};

TEST_P(DecoderFamilies, RunAndLowerUseTheirGraphEmbedRefuses) {
  const std::string file = "synth-" + GetParam() + "-tiny-f32.gguf";
  GGUFLOW_REQUIRE_DATA("models/" + file);
  const Result run = gguflow(run_words(file));
  EXPECT_EQ(run.status, 0) << run.err;
  const Result lower = gguflow(lower_words(file));
  EXPECT_EQ(lower.status, 0) << lower.err;
  EXPECT_THAT(lower.out, HasSubstr("from " + GetParam() + ".yaml (extends "));
  EXPECT_THAT(lower.out, HasSubstr(" for " + file));
  const auto input = temp_dir() / "texts.txt";
  write_text(input, "hello\n");
  const std::string words = embed_words(file, input);
  expect_refused(gguflow(words), file, GetParam(), "for which no shipped graph has job: embed: ", words);
}

INSTANTIATE_TEST_SUITE_P(GraphDefaults, DecoderFamilies,
                         ::testing::Values("qwen3", "gemma2", "gemma3", "phi3"));

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

TEST(GraphDefaults, Llama3RopeFactorsAreRead) {
  // decode.yaml's rope nodes read rope_freqs.weight when the model has it (Llama 3.x).
  const std::string file = "synth-llama3-tiny-f32.gguf";
  GGUFLOW_REQUIRE_DATA("models/" + file);
  const Result r = gguflow(lower_words(file));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("freq_factors: {tensor: rope_freqs.weight"));
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
