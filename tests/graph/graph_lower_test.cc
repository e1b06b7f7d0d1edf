// Lowering: golden files for two real models, every shipped model lowers with weights and
// parameters that agree with the GGUF reader's own view, and a lowered file reloads to the
// same graph (and refuses a model it was not lowered for).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/model_hparams.h"
#include "runtime/graph/graph_choice.h"
#include "runtime/graph/writers.h"
#include "tests/graph/graph_test_util.h"
#include "tests/support/error_of.h"

namespace gguflow::test {
namespace {

using graph::Graph;

std::string lower(const std::string& model_name, const graph::LoadOptions& o = {}) {
  auto model = GgufFile::open(data_path("models/" + model_name).string());
  return graph::lowered_yaml(graph::load_graph(decode_yaml().string(), model, o));
}

// Compares with tests/graph/golden/NAME; GGUFLOW_UPDATE_GOLDEN=1 rewrites the file instead
// (review the diff before committing it).
void expect_golden(const std::string& golden_name, const std::string& actual) {
  const std::filesystem::path path = std::filesystem::path(GGUFLOW_GRAPH_GOLDEN_DIR) / golden_name;
  if (const char* update = std::getenv("GGUFLOW_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    write_text(path, actual);
    GTEST_SKIP() << "rewrote " << path;
  }
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  EXPECT_EQ(read_text(path), actual) << "lowered output differs from " << path;
}

TEST(GraphLower, GoldenStories260K) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  expect_golden("stories260K.decode.yaml", lower("stories260K.gguf"));
}

TEST(GraphLower, GoldenQwen2TinyQ4KM) {
  GGUFLOW_REQUIRE_DATA("models/synth-qwen2-tiny-Q4_K_M.gguf");
  expect_golden("synth-qwen2-tiny-Q4_K_M.decode.yaml", lower("synth-qwen2-tiny-Q4_K_M.gguf"));
}

// Every model in shared/data/models lowers on its default graph, except the one file the GGUF
// reader must reject. Encoders (bert, nomic-bert) have no generate graph, refused by name
// (graph_choice.h), and lower on their embed graph. Models of the llama family are checked
// node by node.
TEST(GraphLower, EveryShippedModelLowers) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  size_t lowered = 0, lowered_by_decode = 0, encoders = 0;
  for (const auto& entry : std::filesystem::directory_iterator(data_path("models"))) {
    if (entry.path().extension() != ".gguf") continue;
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    if (name == "stories260K-q8_0-v2-unaligned.gguf") {
      EXPECT_THROW(GgufFile::open(entry.path().string()), gguflow::Error);
      continue;
    }
    auto model = GgufFile::open(entry.path().string());
    std::string path;
    const std::string no_generate = error_of([&] { path = graph::default_graph_path(*model, graph::Job::kGenerate); });
    if (!no_generate.empty()) {
      EXPECT_THAT(no_generate, ::testing::HasSubstr("for which no shipped graph has job: generate"));
      path = graph::default_graph_path(*model, graph::Job::kEmbed);
      ++encoders;
    }
    const Graph g = graph::load_graph(path, model);
    ++lowered;
    // Each bound weight is exactly the model's tensor (type and dims).
    for (const auto& n : g.nodes) {
      for (size_t w = 0; w < n.weights.size(); ++w) {
        if (!n.weights[w]) {
          EXPECT_TRUE(n.schema->weights[w].optional) << n.name;
          continue;
        }
        const GgufTensorInfo& t = model->tensor(n.weights[w]->tensor);
        EXPECT_EQ(n.weights[w]->type, t.type) << n.name;
        EXPECT_EQ(n.weights[w]->dims, t.dims) << n.name;
      }
    }
    if (path != decode_yaml().string()) continue;  // the family graphs: family_logits_test
    ++lowered_by_decode;
    const ModelHparams hp = read_model_hparams(*model);
    // 1 embed + 15 nodes per layer + output norm + lm-head.
    EXPECT_EQ(g.nodes.size(), static_cast<size_t>(1 + 15 * hp.n_layer + 2));
    EXPECT_EQ(g.model.n_layer, hp.n_layer);
    EXPECT_EQ(g.model.head_dim, hp.head_dim);
    EXPECT_EQ(g.model.n_vocab, hp.n_vocab);
    EXPECT_EQ(g.model.rope_mode == "neox", hp.rope_neox);
    // Biases exist iff the model has them; the lm-head is token_embd iff the output is tied.
    const auto& q = g.nodes[static_cast<size_t>(g.find_node("blk.0.attn_q"))];
    EXPECT_EQ(q.weight("bias").has_value(), model->find_tensor("blk.0.attn_q.bias") != nullptr);
    EXPECT_EQ(g.nodes[static_cast<size_t>(g.find_node("lm_head"))].weight("weight")->tensor,
              hp.tied_output ? "token_embd.weight" : "output.weight");
    const auto& logits = g.tensors[static_cast<size_t>(g.outputs[0])];
    EXPECT_EQ(logits.shape.to_string(), "[" + std::to_string(hp.n_vocab) + ", T]");
    const auto& k = g.tensors[static_cast<size_t>(g.nodes[static_cast<size_t>(g.find_node("blk.0.attn_k"))].outputs[0])];
    EXPECT_EQ(k.shape.dims[0], hp.n_head_kv * hp.head_dim);
  }
  EXPECT_GE(lowered, 32u);            // llama, qwen2, the four families in three types, encoders
  EXPECT_GE(lowered_by_decode, 15u);
  EXPECT_GE(encoders, 4u);            // bert (cls, mean, mean Q8_0), nomic-bert
}

TEST(GraphLower, LoweredFileReloadsToTheSameGraph) {
  GGUFLOW_REQUIRE_DATA("models/synth-qwen2-tiny-Q4_K_M.gguf");
  auto model = GgufFile::open(data_path("models/synth-qwen2-tiny-Q4_K_M.gguf").string());
  const Graph g = graph::load_graph(decode_yaml().string(), model);
  const std::string once = graph::lowered_yaml(g);
  const auto path = temp_dir() / "lowered.yaml";
  write_text(path, once);
  const Graph again = graph::load_graph(path.string(), model);
  ASSERT_EQ(again.nodes.size(), g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    EXPECT_EQ(again.nodes[i].name, g.nodes[i].name);
    EXPECT_EQ(again.nodes[i].schema, g.nodes[i].schema);
    EXPECT_EQ(again.nodes[i].inputs, g.nodes[i].inputs);
    EXPECT_EQ(again.nodes[i].attrs.values, g.nodes[i].attrs.values) << g.nodes[i].name;
    EXPECT_EQ(again.nodes[i].state, g.nodes[i].state);
    EXPECT_EQ(again.nodes[i].group, g.nodes[i].group);
  }
  for (size_t t = 0; t < g.tensors.size(); ++t) EXPECT_EQ(again.tensors[t].shape, g.tensors[t].shape);
  // Lowering the lowered file changes nothing but the provenance comments of params.
  const std::string twice = graph::lowered_yaml(again);
  EXPECT_EQ(twice.substr(twice.find("inputs:")), once.substr(once.find("inputs:")));
}

TEST(GraphLower, LoweredFileRejectsAnotherModel) {
  GGUFLOW_REQUIRE_DATA("models/stories260K-Q8_0.gguf");
  const auto path = temp_dir() / "stories.lowered.yaml";
  write_text(path, lower("stories260K.gguf"));
  auto q8 = GgufFile::open(data_path("models/stories260K-Q8_0.gguf").string());
  try {
    graph::load_graph(path.string(), q8);
    FAIL() << "a graph lowered for the F32 model loaded with the Q8_0 model";
  } catch (const gguflow::Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("weight 'token_embd.weight': expected type F32 (as written), found "
                                               "Q8_0 in stories260K-Q8_0.gguf"));
  }
}

}  // namespace
}  // namespace gguflow::test
