// The unread-tensor check (tensor_coverage.h) and the declarations it reads: `unused:` lists,
// glob patterns, inheritance through `extends`, on small synthetic models written here.
#include <functional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugins/abi/ggml_type.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_writer.h"
#include "runtime/graph/graph_choice.h"
#include "runtime/graph/tensor_coverage.h"
#include "runtime/tools/synth.h"
#include "tests/graph/graph_test_util.h"
#include "tests/support/error_of.h"

namespace gguflow::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr uint64_t kEmbd = 8;
constexpr uint64_t kVocab = 16;

// A GGUF of architecture `arch` holding token_embd.weight [8, 16], output_norm.weight [8] and
// `extra` tensors of 8 floats each (all zeros: only names and shapes matter here).
std::shared_ptr<const GgufFile> toy_model(const std::string& name, const std::string& arch,
                                          const std::vector<std::string>& extra,
                                          const std::function<void(GgufWriter&)>& metadata = {}) {
  const std::string path = (temp_dir() / name).string();
  GgufWriter w(path);
  if (!arch.empty()) w.set_string("general.architecture", arch);
  if (metadata) metadata(w);
  std::vector<std::pair<std::string, std::vector<uint64_t>>> tensors = {{"token_embd.weight", {kEmbd, kVocab}},
                                                                        {"output_norm.weight", {kEmbd}}};
  for (const auto& e : extra) tensors.push_back({e, {kEmbd}});
  for (const auto& [n, dims] : tensors) w.add_tensor(n, GGML_TYPE_F32, dims);
  w.write_header();
  for (const auto& [n, dims] : tensors) {
    const std::vector<float> zeros(dims.size() == 2 ? dims[0] * dims[1] : dims[0], 0.0f);
    w.write_tensor_data(zeros.data(), zeros.size() * sizeof(float));
  }
  w.finish();
  return GgufFile::open(path);
}

// Reads token_embd and output_norm; `extra` is appended to the top-level keys or the nodes.
std::string toy_graph(const std::string& keys = "", const std::string& nodes = "") {
  return "graph: toy\n"
         "architectures: [toy]\n" +
         keys +
         "inputs: {tokens: {dtype: i32, shape: [T]}}\n"
         "outputs: [y]\n"
         "nodes:\n"
         "  - {name: e, op: embed, tokens: tokens, weight: token_embd.weight, out: x}\n"
         "  - {name: n, op: rmsnorm, in: x, weight: output_norm.weight, eps: 1e-5, out: y}\n" +
         nodes;
}

class TensorCoverage : public ::testing::Test {
 protected:
  // The error of loading `text` written to toy_path(), "" when it loads.
  std::string load_message(const std::string& text, std::shared_ptr<const GgufFile> model,
                           const graph::LoadOptions& options = {}) {
    return load_error(toy_path(), text, std::move(model), options);
  }
  std::string toy_path() const { return (dir_ / "toy.yaml").string(); }

  std::filesystem::path dir_ = temp_dir();
};
using GraphDeclarations = TensorCoverage;

TEST(MatchesPattern, ExactNamesAndStars) {
  EXPECT_TRUE(graph::matches_pattern("output.weight", "output.weight"));
  EXPECT_FALSE(graph::matches_pattern("output.weight", "output.weight2"));
  EXPECT_FALSE(graph::matches_pattern("output.weight", "output"));
  EXPECT_TRUE(graph::matches_pattern("blk.*.attn_q_norm.weight", "blk.12.attn_q_norm.weight"));
  EXPECT_FALSE(graph::matches_pattern("blk.*.attn_q_norm.weight", "blk.12.attn_k_norm.weight"));
  EXPECT_TRUE(graph::matches_pattern("blk.*", "blk.0.ffn_up.weight"));
  EXPECT_TRUE(graph::matches_pattern("*", "anything"));
  EXPECT_TRUE(graph::matches_pattern("*.bias", "blk.1.attn_q.bias"));
  EXPECT_FALSE(graph::matches_pattern("*.bias", "blk.1.attn_q.bias.x"));
  EXPECT_TRUE(graph::matches_pattern("a*b*c", "a-b-b-c"));
  EXPECT_FALSE(graph::matches_pattern("a*b*c", "a-c-b"));
}

TEST_F(TensorCoverage, GraphReadingEveryTensorLoads) {
  EXPECT_EQ(load_message(toy_graph(), toy_model("m.gguf", "toy", {})), "");
}

// A model of another family whose tensors the graph reads whole (Gemma 1 and Granite files have
// llama's tensor names) ran through the llama graph; the family itself refuses it now. A model
// without general.architecture is left to the graph's params (which name the key they miss).
TEST_F(GraphDeclarations, AModelOfAFamilyTheGraphDoesNotNameIsRefused) {
  const std::string e = load_message(toy_graph(), toy_model("other.gguf", "toy2", {}));
  EXPECT_EQ(e, toy_path() + ": graph 'toy' implements toy; the model other.gguf is toy2: expected a graph whose "
                            "architectures: name it (without --graph, the shipped one for toy2 if there is one)");
  const std::string without_list =
      replace_once(toy_graph(), "architectures: [toy]\n", "");
  EXPECT_EQ(load_message(without_list, toy_model("other2.gguf", "toy2", {})), "");
  EXPECT_THAT(load_message(toy_graph(), toy_model("none.gguf", "", {})),
              HasSubstr("param 'arch' needs metadata key 'general.architecture'"));
}

// `job:` against what the command runs the graph for.
TEST_F(GraphDeclarations, AGraphForAnotherJobIsRefused) {
  auto model = toy_model("job.gguf", "toy", {});
  graph::LoadOptions embedding;
  embedding.job = graph::Job::kEmbed;
  EXPECT_EQ(load_message(toy_graph("job: generate\n"), model, embedding),
            toy_path() + ": graph 'toy' has job: generate: expected a graph with job: embed or none (a generation "
                         "graph runs with gguflow run)");
  EXPECT_EQ(load_message(toy_graph("job: embed\n"), model, embedding), "");
  EXPECT_EQ(load_message(toy_graph(), model, embedding), "");
  graph::LoadOptions generating;
  generating.job = graph::Job::kGenerate;
  EXPECT_THAT(load_message(toy_graph("job: embed\n"), model, generating),
              HasSubstr("expected a graph with job: generate or none (an embedding graph runs with gguflow embed)"));
}

// Rope scaling changes every family's forward pass and no shipped graph computes it: a model
// declaring it ran with plain rope. Refused unless the graph reads the key.
TEST_F(TensorCoverage, RopeScalingTheGraphDoesNotReadIsRefused) {
  auto linear = toy_model("lin.gguf", "toy", {}, [](GgufWriter& w) {
    w.set_string("toy.rope.scaling.type", "linear");
    w.set_f32("toy.rope.scaling.factor", 8.0f);
  });
  EXPECT_EQ(load_message(toy_graph(), linear),
            "lin.gguf: toy.rope.scaling.type = \"linear\": the model declares rope scaling, which " + toy_path() +
                " does not compute (its params do not read the key): expected a graph that implements it; a run "
                "without it would give other numbers than the model's");
  auto factor_only = toy_model("fac.gguf", "toy", {}, [](GgufWriter& w) { w.set_f32("toy.rope.scaling.factor", 4.0f); });
  EXPECT_THAT(load_message(toy_graph(), factor_only), HasSubstr("toy.rope.scaling.factor = 4"));
  auto neutral = toy_model("neutral.gguf", "toy", {}, [](GgufWriter& w) {
    w.set_string("toy.rope.scaling.type", "none");
    w.set_f32("toy.rope.scaling.factor", 4.0f);  // type none: llama.cpp scales nothing
  });
  EXPECT_EQ(load_message(toy_graph(), neutral), "");
  // A graph whose params read the keys implements it (the key's value is its business).
  EXPECT_EQ(load_message(toy_graph("params: {scaling: \"{arch}.rope.scaling.type\", factor: \"{arch}.rope.scaling.factor\"}\n"),
                         linear),
            "");
}

TEST_F(TensorCoverage, UnreadTensorsAreNamedWithGraphAndArchitecture) {
  auto model = toy_model("qk.gguf", "toy3", {"blk.0.attn_q_norm.weight", "blk.0.attn_k_norm.weight"});
  const std::string e = load_message(toy_graph(), model);
  EXPECT_THAT(e, HasSubstr("blk.0.attn_q_norm.weight, blk.0.attn_k_norm.weight are not read by " +
                           toy_path() + ", which implements toy; this model is toy3 (qk.gguf)"));
  EXPECT_THAT(e, HasSubstr("'unused:'"));
}

TEST_F(TensorCoverage, AtMostTenNamesThenACount) {
  std::vector<std::string> extra;
  for (int i = 0; i < 13; ++i) extra.push_back("extra." + std::to_string(i) + ".weight");
  const std::string e = load_message(toy_graph(), toy_model("many.gguf", "toy", extra));
  EXPECT_THAT(e, HasSubstr("extra.0.weight, extra.1.weight"));
  EXPECT_THAT(e, HasSubstr("extra.9.weight and 3 more are not read by"));
  EXPECT_THAT(e, Not(HasSubstr("extra.10.weight")));
}

TEST_F(TensorCoverage, ReadingOnlyThroughDimOrAPrunedNodeIsNotReading) {
  auto model = toy_model("dim.gguf", "toy", {"extra.weight"});
  const std::string by_dim = load_message(toy_graph("params: {width: \"dim(extra.weight, 0)\"}\n"), model);
  EXPECT_THAT(by_dim, HasSubstr("extra.weight is not read by"));
  // `z` feeds no output, so it is pruned and its weight never read.
  const std::string pruned =
      load_message(toy_graph("", "  - {name: z, op: rmsnorm, in: x, weight: extra.weight, eps: 1e-5, out: z}\n"), model);
  EXPECT_THAT(pruned, HasSubstr("extra.weight is not read by"));
  const std::string live =
      load_message(toy_graph("", "  - {name: z, op: rmsnorm, in: y, weight: extra.weight, eps: 1e-5, out: y}\n"), model);
  EXPECT_EQ(live, "");
}

TEST_F(TensorCoverage, UnusedListsNamesAndPatterns) {
  auto model = toy_model("un.gguf", "toy", {"blk.0.attn_q_norm.weight", "blk.1.attn_q_norm.weight", "extra.weight"});
  EXPECT_EQ(load_message(toy_graph("unused: [extra.weight, 'blk.*.attn_q_norm.weight', not.in.model]\n"), model), "");
  const std::string partial = load_message(toy_graph("unused: ['blk.*']\n"), model);
  EXPECT_THAT(partial, HasSubstr("extra.weight is not read by"));
  EXPECT_THAT(partial, Not(HasSubstr("blk.0")));
}

TEST_F(TensorCoverage, UnusedAccumulatesThroughExtends) {
  auto model = toy_model("ext.gguf", "toy", {"a.weight", "b.weight"});
  const auto& dir = dir_;
  write_text(dir / "base.yaml", toy_graph("unused: [a.weight]\n"));
  write_text(dir / "child.yaml", "graph: child\nextends: base.yaml\nunused: [b.weight]\n");
  const graph::Graph g = graph::load_graph((dir / "child.yaml").string(), model);
  EXPECT_EQ(g.unused, (std::vector<std::string>{"a.weight", "b.weight"}));
  EXPECT_EQ(g.architectures, std::vector<std::string>{"toy"});  // inherited
  write_text(dir / "base_only.yaml", "graph: child\nextends: base.yaml\n");
  EXPECT_THAT(error_of([&] { graph::load_graph((dir / "base_only.yaml").string(), model); }),
              HasSubstr("b.weight is not read by"));
}

TEST_F(TensorCoverage, WeightsFromSideFilesAreNotTheModels) {
  // The node reads `side.weight` from a side file; the model's own tensors are all read.
  auto model = toy_model("main.gguf", "toy", {});
  auto side = toy_model("side.gguf", "kvproj", {"side.weight"});
  graph::LoadOptions o;
  o.weight_files = {side};
  EXPECT_EQ(load_message(toy_graph("", "  - {name: s, op: rmsnorm, in: y, weight: side.weight, eps: 1e-5, out: y}\n"),
                         model, o),
            "");
}

// The rule itself: no graph can run on a tokenizer-only GGUF (reading token ids takes an
// embedding table), so this is checked without loading one.
TEST_F(TensorCoverage, ModelWithoutTensorsPasses) {
  graph::Graph g;
  g.name = "no_weights";
  g.model_file = tensorless_model(dir_ / "vocab.gguf", "llama");
  EXPECT_TRUE(graph::unread_tensors(g).empty());
  EXPECT_NO_THROW(graph::check_reads_model(g));
}

TEST_F(GraphDeclarations, ArchitecturesJobAndUnusedAreChecked) {
  auto model = toy_model("decl.gguf", "toy", {});
  const std::string text = toy_graph("job: chat\n");
  const std::string e = load_message(text, model);
  EXPECT_THAT(e, HasSubstr(location_of(toy_path(), text, "chat") +
                           ": job: expected one of generate, embed, found 'chat'"));
  EXPECT_THAT(load_message(toy_graph("unused: output.weight\n"), model),
              HasSubstr("expected 'unused' to be a list of tensor names or patterns, found a plain value"));
  EXPECT_THAT(load_message(replace_once(toy_graph(), "[toy]", "{toy: 1}"), model),
              HasSubstr("expected 'architectures' to be a list of general.architecture values, found a map"));
}

TEST_F(GraphDeclarations, JobIsNotInherited) {
  auto model = toy_model("job.gguf", "toy", {});
  const auto& dir = dir_;
  write_text(dir / "base.yaml", toy_graph("job: generate\n"));
  write_text(dir / "variant.yaml", "graph: variant\nextends: base.yaml\n");
  EXPECT_EQ(graph::load_graph((dir / "base.yaml").string(), model).job, "generate");
  EXPECT_EQ(graph::load_graph((dir / "variant.yaml").string(), model).job, "");
}

TEST_F(TensorCoverage, SynthPresetsAreReadWhollyByTheirDefaultGraph) {
  // Each preset's tensor set (arch, biases, tied output) at a tiny size: `gguflow synth`
  // models must stay runnable.
  for (const SynthPreset& preset : synth_presets()) {
    SCOPED_TRACE(preset.name);
    SynthOptions o;
    o.shape = preset.shape;
    o.shape.n_embd = 64, o.shape.n_layer = 2, o.shape.n_head = 4, o.shape.n_head_kv = 2, o.shape.n_ff = 128;
    o.shape.n_vocab = 300, o.shape.n_ctx = 512;
    o.file_type = "Q8_0";
    o.output = (dir_ / (std::string(preset.name) + ".gguf")).string();
    synth_model(o);
    auto model = GgufFile::open(o.output);
    const bool encoder = preset.shape.arch == "bert" || preset.shape.arch == "nomic-bert";
    const graph::Job job = encoder ? graph::Job::kEmbed : graph::Job::kGenerate;
    EXPECT_EQ(error_of([&] { graph::load_graph(graph::default_graph_path(*model, job), model); }), "");
  }
}

}  // namespace
}  // namespace gguflow::test
