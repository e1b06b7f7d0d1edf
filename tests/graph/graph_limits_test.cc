// Hardening (issue 23): graph expansion has a budget (GGUFLOW_MAX_GRAPH_NODES, GGUFLOW_MAX_REPEAT)
// checked before anything is unrolled, and each hostile graph or model in
// ../shared/data/malformed fails at once with one message naming the limit.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_writer.h"
#include "runtime/graph/limits.h"
#include "tests/graph/graph_test_util.h"
#include "tests/support/edited_model.h"

namespace gguflow::test {
namespace {

using ::testing::HasSubstr;

// Sets an environment variable for the scope of one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }

 private:
  const char* name_;
};

std::string error_loading(const std::string& graph, std::shared_ptr<const GgufFile> model,
                          const graph::LoadOptions& options = {}) {
  try {
    graph::load_graph(graph, std::move(model), options);
  } catch (const gguflow::Error& e) {
    return e.what();
  }
  return "";
}

class GraphLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(data_path("models/stories260K.gguf")))
      GTEST_SKIP() << "test data not found: " << data_path("models/stories260K.gguf");
    model_ = GgufFile::open(data_path("models/stories260K.gguf").string());
  }
  std::string malformed(const std::string& name) {
    return data_path("malformed/" + name).string();
  }
  std::shared_ptr<const GgufFile> model_;
};

TEST_F(GraphLimits, ShippedGraphLoadsWithinTheDefaultLimits) {
  EXPECT_EQ(error_loading(decode_yaml().string(), model_), "");
}

TEST_F(GraphLimits, RepeatOfOneBillionIsRefusedBeforeExpanding) {
  GGUFLOW_REQUIRE_DATA("malformed/graph_repeat_1e9.yaml");
  const std::string e = error_loading(malformed("graph_repeat_1e9.yaml"), model_);
  EXPECT_THAT(e, HasSubstr("graph_repeat_1e9.yaml:"));
  EXPECT_THAT(e, HasSubstr("repeat: count 1000000000 is more than the limit of 65536 (set GGUFLOW_MAX_REPEAT"));
}

TEST_F(GraphLimits, SetNLayerToOneBillionIsRefused) {
  graph::LoadOptions o;
  o.set = {{"n_layer", "1000000000"}};
  EXPECT_THAT(error_loading(decode_yaml().string(), model_, o),
              HasSubstr("repeat: count 1000000000 is more than the limit of 65536"));
}

TEST_F(GraphLimits, BlockCountOfOneBillionInTheModelIsRefused) {
  GGUFLOW_REQUIRE_DATA("malformed/tiny_block_count_1e9.gguf");
  auto model = GgufFile::open(malformed("tiny_block_count_1e9.gguf"));
  EXPECT_THAT(error_loading(decode_yaml().string(), model),
              HasSubstr("repeat: count 1000000000 is more than the limit of 65536"));
}

TEST_F(GraphLimits, YamlAliasBombIsRefusedWhileParsing) {
  GGUFLOW_REQUIRE_DATA("malformed/graph_alias_bomb.yaml");
  const std::string e = error_loading(malformed("graph_alias_bomb.yaml"), model_);
  EXPECT_THAT(e, HasSubstr("graph_alias_bomb.yaml:"));
  EXPECT_THAT(e, HasSubstr("once its YAML aliases are resolved, more than the limit of 1000000 graph "
                           "items (set GGUFLOW_MAX_GRAPH_NODES to raise it)"));
}

// Found by fuzz_graph_loader (fuzz/findings/graph_loader_stack_overflow.bin): repeat blocks
// nested through YAML aliases recursed until the stack overflowed.
TEST_F(GraphLimits, DeeplyNestedRepeatBlocksAreRefused) {
  std::string yaml = "graph: deep\nextends: " + decode_yaml().string() +
                     "\nparams:\n  b0: &b0 [{name: bomb, op: add, in: [x, x], out: x}]\n";
  for (int i = 1; i < 100; ++i)
    yaml += "  b" + std::to_string(i) + ": &b" + std::to_string(i) + " [{repeat: 1, nodes: *b" +
            std::to_string(i - 1) + "}]\n";
  yaml += "append: *b99\n";
  const std::filesystem::path file = temp_dir() / "deep.yaml";
  std::ofstream(file) << yaml;
  EXPECT_THAT(error_loading(file.string(), model_),
              HasSubstr("repeat blocks nested deeper than 64 levels"));
}

TEST_F(GraphLimits, ExpansionPastTheNodeBudgetIsRefusedBeforeUnrolling) {
  // decode.yaml on stories260K expands to a few dozen nodes: a budget of 20 is exceeded by the
  // layer repeat, which is refused as a whole.
  ScopedEnv env("GGUFLOW_MAX_GRAPH_NODES", "20");
  const std::string e = error_loading(decode_yaml().string(), model_);
  EXPECT_THAT(e, HasSubstr("decode.yaml:"));
  EXPECT_THAT(e, HasSubstr("items each would expand the graph to more than 20 items, more than the limit of 20 "
                           "graph items (nodes and repeat iterations; set GGUFLOW_MAX_GRAPH_NODES to raise it)"));
}

TEST_F(GraphLimits, RaisingTheLimitsByEnvironmentWorks) {
  ScopedEnv env("GGUFLOW_MAX_REPEAT", "2000000000");
  graph::LoadOptions o;
  o.set = {{"n_layer", "1000000000"}};
  // Past the repeat limit now, the node budget still refuses it, before unrolling.
  EXPECT_THAT(error_loading(decode_yaml().string(), model_, o),
              HasSubstr("repeat: 1000000000 iterations of"));
}

TEST_F(GraphLimits, BadLimitValueIsNamed) {
  ScopedEnv env("GGUFLOW_MAX_REPEAT", "lots");
  EXPECT_THAT(error_loading(decode_yaml().string(), model_),
              HasSubstr("GGUFLOW_MAX_REPEAT: expected a positive integer, found 'lots'"));
}

TEST_F(GraphLimits, OverflowingCountArithmeticIsRefused) {
  GGUFLOW_REQUIRE_DATA("malformed/graph_mul_overflow.yaml");
  const std::string e = error_loading(malformed("graph_mul_overflow.yaml"), model_);
  EXPECT_THAT(e, HasSubstr("graph_mul_overflow.yaml:"));
  EXPECT_THAT(e, HasSubstr("overflow"));
}

// Done elsewhere (expression.cc); verified here so they stay fixed.
TEST_F(GraphLimits, Int64MinDivisionAndDeepParenthesesAreCleanErrors) {
  GGUFLOW_REQUIRE_DATA("malformed/graph_int64_min_div.yaml");
  GGUFLOW_REQUIRE_DATA("malformed/graph_deep_parens.yaml");
  EXPECT_THAT(error_loading(malformed("graph_int64_min_div.yaml"), model_), HasSubstr("graph_int64_min_div.yaml:"));
  EXPECT_THAT(error_loading(malformed("graph_deep_parens.yaml"), model_), HasSubstr("graph_deep_parens.yaml:"));
}

TEST_F(GraphLimits, DuplicateTopLevelKeyIsRefusedWithItsPlace) {
  const auto path = temp_dir() / "dup.yaml";
  const std::string text = read_text(decode_yaml()) + "nodes: []\n";
  const std::string e = load_error(path, text, model_);
  const size_t second = text.rfind("nodes: []");
  EXPECT_THAT(e, HasSubstr(location_of(path.string(), text.substr(0, second) + "@", "@") +
                           ": duplicate top-level key 'nodes': expected each key once, found it again (first at " +
                           location_of(path.string(), text, "\nnodes:", 1) + ")"));
}

// Nested mappings too (issue 23): yaml-cpp keeps both entries and node[key] returns the first,
// so a second `out:` in a node or `n_layer:` under params was silently ignored.
TEST_F(GraphLimits, DuplicateKeyInANodeIsRefusedWithItsPlace) {
  const auto path = temp_dir() / "dup_node.yaml";
  const std::string node = "{name: token_embd, op: embed, tokens: tokens, weight: token_embd.weight, out: x}";
  const std::string text =
      replace_once(read_text(decode_yaml()), node,
                   "{name: token_embd, op: embed, tokens: tokens, weight: token_embd.weight, out: x, out: y}");
  EXPECT_THAT(load_error(path, text, model_),
              HasSubstr(location_of(path.string(), text, "out: y") +
                        ": duplicate key 'out' in a mapping: expected each key once, found it again (first at " +
                        location_of(path.string(), text, "out: x, out: y") + ")"));
}

TEST_F(GraphLimits, DuplicateParamIsRefusedWithItsPlace) {
  const auto path = temp_dir() / "dup_param.yaml";
  const std::string text = replace_once(read_text(decode_yaml()), "params:\n", "params:\n  n_layer: 1\n");
  EXPECT_THAT(load_error(path, text, model_),
              HasSubstr(location_of(path.string(), text, "  n_layer:     \"{arch}", 2) +
                        ": duplicate key 'n_layer' in a mapping: expected each key once, found it again (first at " +
                        location_of(path.string(), text, "  n_layer: 1", 2) + ")"));
}

// Deeper: a switch's cases inside a derived graph's params, and a base file with a duplicate
// in a node of a repeat block, reported in the base file where it was written.
TEST_F(GraphLimits, DuplicateKeysAreRefusedAtAnyDepthAndInBaseFiles) {
  const auto dir = temp_dir();
  const std::string derived =
      "graph: derived\n"
      "extends: decode.yaml\n"
      "params:\n"
      "  rope_mode:\n"
      "    switch: arch\n"
      "    cases: {llama: normal, qwen2: neox, llama: neox}\n";
  write_text(dir / "decode.yaml", read_text(decode_yaml()));
  EXPECT_THAT(load_error(dir / "derived.yaml", derived, model_),
              HasSubstr(location_of((dir / "derived.yaml").string(), derived, "llama: neox") +
                        ": duplicate key 'llama' in a mapping"));

  const std::string node = "{name: \"blk.{i}.ffn_act\", op: silu_mul, gate: g, up: u, out: g}";
  const std::string base = replace_once(read_text(decode_yaml()), node,
                                        "{name: \"blk.{i}.ffn_act\", op: silu_mul, gate: g, up: u, gate: u, out: g}");
  write_text(dir / "decode.yaml", base);
  const std::string child = "graph: child\nextends: decode.yaml\n";
  EXPECT_THAT(load_error(dir / "child.yaml", child, model_),
              HasSubstr(location_of((dir / "decode.yaml").string(), base, "gate: u,") +
                        ": duplicate key 'gate' in a mapping: expected each key once, found it again (first at " +
                        location_of((dir / "decode.yaml").string(), base, "gate: g, up: u, gate: u") + ")"));
}

// An aliased mapping is one node: its keys are checked once, and a duplicate inside it is
// reported where the anchor was written.
TEST_F(GraphLimits, DuplicateKeyInAnAliasedMappingIsReportedAtTheAnchor) {
  const auto path = temp_dir() / "dup_alias.yaml";
  const std::string text = replace_once(
      read_text(decode_yaml()), "inputs:\n",
      "inputs:\n  extra: &spec {dtype: i32, shape: [T], dtype: f32}\n  again: *spec\n");
  EXPECT_THAT(load_error(path, text, model_),
              HasSubstr(location_of(path.string(), text, "dtype: f32") + ": duplicate key 'dtype' in a mapping"));
}

// ---- model metadata checked when a graph binds (issue 23, class 7) ----------------------------

// stories260K with `key` replaced by what `set` writes (nothing: removed).
std::shared_ptr<const GgufFile> edited_model(const std::string& key, const std::function<void(GgufWriter&)>& set) {
  auto source = GgufFile::open(data_path("models/stories260K.gguf").string());
  const auto path = temp_dir() / "edited.gguf";
  write_edited_model(*source, path, {key}, set);
  return GgufFile::open(path.string());
}

TEST_F(GraphLimits, HyperparametersOfTheWrongTypeOrValueAreRefusedNamingKeyTypeAndValue) {
  auto e = error_loading(decode_yaml().string(), edited_model("llama.block_count", [](GgufWriter& w) {
    w.set_bool("llama.block_count", true);
  }));
  EXPECT_THAT(e, HasSubstr("edited.gguf: metadata 'llama.block_count': expected a positive integer, found bool true"));
  e = error_loading(decode_yaml().string(), edited_model("llama.context_length", [](GgufWriter& w) {
    w.set_i32("llama.context_length", -1);
  }));
  EXPECT_THAT(e, HasSubstr("metadata 'llama.context_length': expected a positive integer, found i32 -1"));
  e = error_loading(decode_yaml().string(), edited_model("llama.context_length", [](GgufWriter& w) {
    w.set_string("llama.context_length", "2048");
  }));
  EXPECT_THAT(e, HasSubstr("metadata 'llama.context_length': expected a positive integer, found string \"2048\""));
}

// A nan epsilon bound and ran: all-nan logits, token 0 sampled, exit 0 (audit 2026-12-06).
TEST_F(GraphLimits, FloatHyperparametersMustBeFiniteAndEpsilonsAndRopeBasePositive) {
  const char* eps = "llama.attention.layer_norm_rms_epsilon";
  auto e = error_loading(decode_yaml().string(), edited_model(eps, [&](GgufWriter& w) {
    w.set_f32(eps, std::numeric_limits<float>::quiet_NaN());
  }));
  EXPECT_THAT(e, HasSubstr("metadata 'llama.attention.layer_norm_rms_epsilon': expected a finite positive number, found f32"));
  e = error_loading(decode_yaml().string(), edited_model(eps, [&](GgufWriter& w) { w.set_f32(eps, -1.0f); }));
  EXPECT_THAT(e, HasSubstr("expected a finite positive number, found f32 -1"));
  e = error_loading(decode_yaml().string(), edited_model("llama.rope.freq_base", [](GgufWriter& w) {
    w.set_f32("llama.rope.freq_base", 0.0f);
  }));
  EXPECT_THAT(e, HasSubstr("metadata 'llama.rope.freq_base': expected a finite positive number"));
  e = error_loading(decode_yaml().string(), edited_model("llama.rope.scale_linear", [](GgufWriter& w) {
    w.set_f32("llama.rope.scale_linear", std::numeric_limits<float>::infinity());
  }));
  EXPECT_THAT(e, HasSubstr("metadata 'llama.rope.scale_linear': expected a finite number"));
  // The same values given to the graph directly (--set) are refused at the attribute.
  graph::LoadOptions nan_base;
  nan_base.set = graph::parse_set_options({"rope_base=nan"});  // not a number to the parser
  EXPECT_THAT(error_loading(decode_yaml().string(), model_, nan_base), HasSubstr("expected a number, found 'nan'"));
  graph::LoadOptions huge_base;
  huge_base.set = graph::parse_set_options({"rope_base=1e999"});  // a number, but infinite
  EXPECT_THAT(error_loading(decode_yaml().string(), model_, huge_base), HasSubstr("expected a finite number"));
  graph::LoadOptions negative_base;
  negative_base.set = graph::parse_set_options({"rope_base=-5"});
  EXPECT_THAT(error_loading(decode_yaml().string(), model_, negative_base), HasSubstr("expected base > 0, found -5"));
}

TEST_F(GraphLimits, EmbeddingLengthMustMatchTokenEmbd) {
  const auto e = error_loading(decode_yaml().string(), edited_model("llama.embedding_length", [](GgufWriter& w) {
    w.set_u32("llama.embedding_length", 65);
  }));
  EXPECT_THAT(e, HasSubstr("metadata 'llama.embedding_length' is u32 65 but tensor 'token_embd.weight' has rows of 64"));
}

TEST_F(GraphLimits, TokenCountMustMatchTokenEmbdRows) {
  const auto e = error_loading(decode_yaml().string(), edited_model("tokenizer.ggml.tokens", [](GgufWriter& w) {
    std::vector<std::string> tokens;
    for (int i = 0; i < 256; ++i) tokens.push_back("t" + std::to_string(i));
    w.set_string_array("tokenizer.ggml.tokens", tokens);
  }));
  EXPECT_THAT(e, HasSubstr("metadata 'tokenizer.ggml.tokens' holds 256 tokens but tensor 'token_embd.weight' has 512 rows"));
}

}  // namespace
}  // namespace gguflow::test
