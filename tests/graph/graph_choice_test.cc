// The default graph of a model (graph_choice.h): chosen by the architectures and job the shipped
// graphs declare; an unknown architecture and two graphs claiming one default are errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/graph/graph_choice.h"
#include "tests/graph/graph_test_util.h"
#include "tests/support/error_of.h"

namespace gguflow::test {
namespace {

using graph::GraphClaim;
using graph::Job;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string file_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

const std::vector<GraphClaim> kClaims = {
    {"/g/decode.yaml", {"llama", "qwen2"}, "generate"},
    {"/g/embed.yaml", {"llama", "qwen2"}, "embed"},
    {"/g/variant.yaml", {"llama", "qwen2"}, ""},
    {"/g/other.yaml", {"toy"}, "generate"},
};

TEST(GraphChoice, ByArchitectureAndJob) {
  EXPECT_EQ(graph::choose_graph(kClaims, "qwen2", Job::kGenerate, "m.gguf"), "/g/decode.yaml");
  EXPECT_EQ(graph::choose_graph(kClaims, "llama", Job::kEmbed, "m.gguf"), "/g/embed.yaml");
  EXPECT_EQ(graph::choose_graph(kClaims, "toy", Job::kGenerate, "m.gguf"), "/g/other.yaml");
}

TEST(GraphChoice, UnknownArchitectureListsWhatEachGraphImplements) {
  EXPECT_EQ(error_of([] { graph::choose_graph(kClaims, "qwen3", Job::kGenerate, "q3.gguf"); }),
            "model q3.gguf has architecture 'qwen3', which no shipped graph implements: decode.yaml implements "
            "llama, qwen2 (generate); embed.yaml implements llama, qwen2 (embed); other.yaml implements toy "
            "(generate); variant.yaml implements llama, qwen2");
  EXPECT_THAT(error_of([] { graph::choose_graph(kClaims, "toy", Job::kEmbed, "t.gguf"); }),
              HasSubstr("model t.gguf has architecture 'toy', for which no shipped graph has job: embed: "));
  EXPECT_THAT(error_of([] { graph::choose_graph(kClaims, "", Job::kGenerate, "v.gguf"); }),
              HasSubstr("model v.gguf has no general.architecture"));
}

TEST(GraphChoice, TwoDefaultsForOneArchitectureAndJobAreAnError) {
  std::vector<GraphClaim> claims = kClaims;
  EXPECT_EQ(error_of([&] { graph::check_unique_claims(claims); }), "");
  claims.push_back({"/g/decode2.yaml", {"mistral", "qwen2"}, "generate"});
  EXPECT_EQ(error_of([&] { graph::check_unique_claims(claims); }),
            "graphs /g/decode.yaml and /g/decode2.yaml both declare architecture 'qwen2' with job: generate: "
            "expected one default graph per architecture and job");
}

TEST(GraphChoice, ClaimsAreReadThroughExtends) {
  const auto dir = temp_dir();
  write_text(dir / "a.yaml", "graph: a\narchitectures: [toy, toy2]\njob: generate\nnodes: []\n");
  write_text(dir / "b.yaml", "graph: b\nextends: a.yaml\njob: embed\n");
  write_text(dir / "c.yaml", "graph: c\nextends: b.yaml\narchitectures: [toy2]\n");
  write_text(dir / "notes.txt", "not a graph");
  const std::vector<GraphClaim> claims = graph::read_graph_claims(dir.string());
  ASSERT_EQ(claims.size(), 3u);
  EXPECT_EQ(file_name(claims[0].path), "a.yaml");
  EXPECT_THAT(claims[1].architectures, ElementsAre("toy", "toy2"));  // inherited
  EXPECT_EQ(claims[1].job, "embed");
  EXPECT_THAT(claims[2].architectures, ElementsAre("toy2"));  // restated
  EXPECT_EQ(claims[2].job, "");                               // never inherited
}

TEST(GraphChoice, ShippedGraphsHaveOneDefaultPerArchitectureAndJob) {
  const std::vector<GraphClaim> shipped = graph::read_graph_claims(graph::shipped_graphs_dir());
  EXPECT_EQ(error_of([&] { graph::check_unique_claims(shipped); }), "");
  EXPECT_EQ(file_name(graph::choose_graph(shipped, "llama", Job::kGenerate, "m")), "decode.yaml");
  EXPECT_EQ(file_name(graph::choose_graph(shipped, "qwen2", Job::kGenerate, "m")), "decode.yaml");
  EXPECT_EQ(file_name(graph::choose_graph(shipped, "mistral", Job::kGenerate, "m")), "decode.yaml");
  EXPECT_EQ(file_name(graph::choose_graph(shipped, "llama", Job::kEmbed, "m")), "embed.yaml");
  for (const auto& c : shipped) {
    if (file_name(c.path) == "decode-lowrank-kv.yaml") {
      EXPECT_EQ(c.job, "") << "an opt-in variant is no default";
    }
  }
}

TEST(GraphChoice, DefaultGraphPathReadsTheModelsArchitecture) {
  const auto model = tensorless_model(temp_dir() / "arch.gguf", "gemma7");
  EXPECT_THAT(error_of([&] { graph::default_graph_path(*model, Job::kGenerate); }),
              HasSubstr("model arch.gguf has architecture 'gemma7', which no shipped graph implements: bert.yaml "
                        "implements bert (embed); decode.yaml implements llama, qwen2, mistral (generate)"));
}

}  // namespace
}  // namespace gguflow::test
