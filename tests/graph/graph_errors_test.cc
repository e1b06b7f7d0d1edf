// Every validation error names FILE:LINE:COLUMN, what was expected and what was found. Each
// case edits the shipped decode graph (or writes a small file) and computes the expected place
// from the edited text, so the test fails if the location drifts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/gguf/gguf_file.h"
#include "tests/graph/graph_test_util.h"

namespace gguflow::test {
namespace {

using ::testing::HasSubstr;

class GraphErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(data_path("models/stories260K.gguf"))) GTEST_SKIP() << "no test data";
    model_ = GgufFile::open(data_path("models/stories260K.gguf").string());
    base_ = read_text(decode_yaml());
    dir_ = temp_dir();
    path_ = (dir_ / "g.yaml").string();
  }
  // Loads base_ edited by replacing `from` with `to`; returns the error.
  std::string edited(const std::string& from, const std::string& to, const graph::LoadOptions& o = {}) {
    text_ = replace_once(base_, from, to);
    return load_error(path_, text_, model_, o);
  }
  std::string at(const std::string& needle, size_t skip = 0) { return location_of(path_, text_, needle, skip) + ": "; }

  std::shared_ptr<const GgufFile> model_;
  std::string base_, text_, path_;
  std::filesystem::path dir_;
};

TEST_F(GraphErrors, ShippedGraphLoads) { EXPECT_EQ(load_error(path_, base_, model_), ""); }

TEST_F(GraphErrors, YamlSyntaxErrorHasLineAndColumn) {
  const std::string e = edited("outputs: [logits]", "outputs: [logits\nstate: {");
  EXPECT_THAT(e, HasSubstr("YAML syntax error"));
  EXPECT_THAT(e, ::testing::MatchesRegex(".*g\\.yaml:[0-9]+:[0-9]+: YAML syntax error.*"));
}

// `in:` and the slot's own name for the same input: one of them won without a word.
TEST_F(GraphErrors, AnInputGivenTwiceIsRefused) {
  const std::string e = edited("in: h, weight: \"blk.{i}.attn_q.weight\",", "in: h, x: x, weight: \"blk.{i}.attn_q.weight\",");
  EXPECT_THAT(e, HasSubstr("op matmul: input 'x' given twice (by `in:` and by name)"));
  EXPECT_THAT(e, ::testing::MatchesRegex(".*g\\.yaml:[0-9]+:[0-9]+: op matmul.*"));
}

// What a graph input holds is what its readers' slots ask for (token ids, positions); a session
// refused an input with two meanings or one it does not fill, and `lower`/`graph` said valid.
TEST_F(GraphErrors, AnInputReadAsTokenIdsAndAsPositionsIsRefused) {
  const std::string e = edited("x: q, positions: positions", "x: q, positions: tokens");
  EXPECT_THAT(e, HasSubstr(at("tokens, head_dim") + "node 'blk.0.rope_q': graph input 'tokens' is read here as "
                           "positions and as token ids by node 'token_embd' at " + at("tokens, weight: token_embd")));
  EXPECT_THAT(e, HasSubstr("expected one meaning per input"));
}

TEST_F(GraphErrors, AnInputTheExecutorDoesNotFillIsRefused) {
  text_ = replace_once(base_, "outputs: [logits]", "  bias: {dtype: f32, shape: [$n_embd, T]}\noutputs: [logits]");
  text_ = replace_once(text_, "op: add, in: [x, f], out: x}", "op: add, in: [x, bias], out: x}");
  const std::string e = load_error(path_, text_, model_);
  EXPECT_THAT(e, HasSubstr(at("bias], out: x}") + "node 'blk.0.ffn_residual': graph input 'bias' is read by slot "));
  EXPECT_THAT(e, HasSubstr("which the executor does not fill"));
}

TEST_F(GraphErrors, UnknownOpSuggestsClosest) {
  const std::string e = edited("op: silu_mul", "op: silu_mull");
  EXPECT_THAT(e, HasSubstr(at("silu_mull") + "unknown op 'silu_mull': expected one of embed, rmsnorm"));
  EXPECT_THAT(e, HasSubstr("(did you mean 'silu_mul'?)"));
}

TEST_F(GraphErrors, MisspelledAttributeSuggestsClosest) {
  const std::string e = edited("eps: $eps", "epss: $eps");
  EXPECT_THAT(e, HasSubstr(at("epss") + "unknown attribute 'epss' for op rmsnorm: expected one of"));
  EXPECT_THAT(e, HasSubstr("(did you mean 'eps'?)"));
}

TEST_F(GraphErrors, BadEnumValueListsChoices) {
  const std::string e = edited("mode: $rope_mode", "mode: neoxx");
  EXPECT_THAT(e, HasSubstr(at("neoxx") + "attribute 'mode' of op rope: expected one of normal, neox, found 'neoxx'"));
}

TEST_F(GraphErrors, MissingRequiredInput) {
  const std::string e = edited("k: k, v: v, positions", "k: k, positions");
  EXPECT_THAT(e, HasSubstr(at("{name: \"blk.{i}.attention\"") + "op attention (node 'blk.0.attention'): "
                           "missing required input 'v'"));
}

TEST_F(GraphErrors, MissingRequiredAttribute) {
  const std::string e = edited("n_head: $n_head, n_head_kv", "n_head_kv");
  EXPECT_THAT(e, HasSubstr("missing required attribute 'n_head' (int)"));
  EXPECT_THAT(e, HasSubstr(at("{name: \"blk.{i}.attention\"")));
}

TEST_F(GraphErrors, NameUsedBeforeDefinition) {
  // `g` is assigned twice, both below rope_q.
  const std::string e = edited("op: rope, x: q", "op: rope, x: g");
  EXPECT_THAT(e, HasSubstr(at("x: g", 3) + "node 'blk.0.rope_q': 'g' is used before its definition"));
  EXPECT_THAT(e, HasSubstr("found its first assignment at " + path_ + ":"));
}

TEST_F(GraphErrors, NameNeverDefined) {
  const std::string e = edited("in: g, weight: \"blk.{i}.ffn_down", "in: gg, weight: \"blk.{i}.ffn_down");
  EXPECT_THAT(e, HasSubstr(at("in: gg", 4) + "node 'blk.0.ffn_down': 'gg' is used but never defined"));
  EXPECT_THAT(e, HasSubstr("did you mean 'g'?"));
}

TEST_F(GraphErrors, CycleNamesTheNodes) {
  const std::string e = edited(
      "  - {name: lm_head, op: matmul, in: x,",
      "  - {name: c1, op: add, in: [x, z], out: y}\n"
      "  - {name: c2, op: add, in: [y, x], out: z}\n"
      "  - {name: lm_head, op: matmul, in: y,");
  EXPECT_THAT(e, HasSubstr("cycle in the graph: expected tensors to flow one way, found "));
  EXPECT_THAT(e, HasSubstr("'c1' (" + location_of(path_, text_, "{name: c1")));
  EXPECT_THAT(e, HasSubstr("'c2' (" + location_of(path_, text_, "{name: c2")));
}

TEST_F(GraphErrors, TensorNotInModel) {
  const std::string e = edited("\"blk.{i}.ffn_up.weight\"", "\"blk.{i}.ffn_upp.weight\"");
  EXPECT_THAT(e, HasSubstr(at("\"blk.{i}.ffn_upp") + "node 'blk.0.ffn_up': tensor 'blk.0.ffn_upp.weight' not in "
                           "the model stories260K.gguf"));
}

TEST_F(GraphErrors, AllFallbacksAbsentNamesEach) {
  const std::string e = edited("\"output.weight ?? token_embd.weight\"", "\"outputx.weight ?? token_embdx.weight\"");
  EXPECT_THAT(e, HasSubstr("tensor 'outputx.weight', 'token_embdx.weight' not in the model"));
}

TEST_F(GraphErrors, OptionalMarkOnRequiredSlotStillRequiresTheTensor) {
  const std::string e = edited("weight: \"blk.{i}.ffn_gate.weight\"", "weight: \"blk.{i}.ffn_gatex.weight?\"");
  EXPECT_THAT(e, HasSubstr("weight 'weight' of op matmul is required, but 'blk.0.ffn_gatex.weight' is absent"));
}

TEST_F(GraphErrors, MatmulInnerDimensionMismatchShowsBothShapes) {
  // ffn_down reads g [n_ff, T] = [172, T]; give it ffn_up [64, 172].
  const std::string e = edited("weight: \"blk.{i}.ffn_down.weight\"", "weight: \"blk.{i}.ffn_up.weight\"");
  EXPECT_THAT(e, HasSubstr(at("{name: \"blk.{i}.ffn_down\"") + "shape mismatch in node 'blk.0.ffn_down' (op matmul)"));
  EXPECT_THAT(e, HasSubstr("input 'g' [172, T]"));
  EXPECT_THAT(e, HasSubstr("weight 'blk.0.ffn_up.weight' [64, 172]"));
}

TEST_F(GraphErrors, ElementwiseShapeMismatch) {
  const std::string e = edited("in: [x, f], out: x}", "in: [x, g], out: x}");
  EXPECT_THAT(e, HasSubstr("shape mismatch in node 'blk.0.ffn_residual' (op add): expected equal shapes, found "
                           "input 'x' [64, T] and input 'g' [172, T]"));
}

TEST_F(GraphErrors, WrongInputDtype) {
  const std::string e = edited("op: embed, tokens: tokens", "op: embed, tokens: positions, x: tokens");
  EXPECT_THAT(e, HasSubstr("unknown attribute 'x' for op embed"));
  const std::string e2 = edited("op: rope, x: q, positions: positions", "op: rope, x: q, positions: q");
  EXPECT_THAT(e2, HasSubstr("input 'positions' of op rope: expected a i32 tensor, found 'q' of type f32"));
}

TEST_F(GraphErrors, MissingMetadataKeyWithoutDefault) {
  const std::string e = edited("\"{arch}.context_length\"", "\"{arch}.context_lengthh\"");
  EXPECT_THAT(e, HasSubstr(at("\"{arch}.context_lengthh") + "param 'n_ctx_train' needs metadata key "
                           "'llama.context_lengthh' (not in stories260K.gguf): expected the key in the model or a "
                           "default (write '?? VALUE')"));
  // With a default it loads.
  EXPECT_EQ(edited("\"{arch}.context_length\"", "\"{arch}.context_lengthh ?? 77\""), "");
}

TEST_F(GraphErrors, ExpressionSyntaxError) {
  const std::string e = edited("\"{arch}.attention.key_length ?? n_embd / n_head\"", "\"n_embd / / n_head\"");
  EXPECT_THAT(e, HasSubstr("in expression 'n_embd / / n_head' at character 10: expected a number, a name, a "
                           "metadata key or '(', found '/'"));
}

TEST_F(GraphErrors, ParamCycle) {
  const std::string e = edited("n_head:      \"{arch}.attention.head_count\"", "n_head: \"head_dim * 2\"");
  EXPECT_THAT(e, HasSubstr("depends on itself"));
}

TEST_F(GraphErrors, RepeatCountMustBeNonNegativeInteger) {
  for (const std::string count : {"-1", "2.5", "${n_embd / 3.0}", "llama"}) {
    const std::string e = edited("- repeat: n_layer", "- repeat: " + count);
    if (count == "llama") {
      EXPECT_THAT(e, HasSubstr("expected a param name, found 'llama'"));
      continue;
    }
    EXPECT_THAT(e, HasSubstr(at("- repeat: ", 10) + "repeat: expected a non-negative integer count, found '"))
        << count;
  }
  // An expression is a valid count: one layer fewer binds, and the last layer is left unread.
  const std::string fewer = edited("- repeat: n_layer", "- repeat: ${n_layer - 1}");
  EXPECT_THAT(fewer, HasSubstr("blk.4.attn_q.weight, blk.4.attn_k.weight"));
  EXPECT_THAT(fewer, ::testing::Not(HasSubstr("blk.3.")));
  EXPECT_THAT(fewer, ::testing::Not(HasSubstr("repeat")));
}

TEST_F(GraphErrors, UnknownState) {
  const std::string e = edited("cache: \"kv.{i}\"", "cache: \"kv{i}\"");
  EXPECT_THAT(e, HasSubstr(at("\"kv{i}\"") + "node 'blk.0.attention': expected a declared kv_cache state, found "
                           "'kv0' (did you mean 'kv.0'?)"));
}

TEST_F(GraphErrors, StateShapeMustMatchAttention) {
  const std::string e = edited("head_dim: $head_dim}", "head_dim: 4}");
  EXPECT_THAT(e, HasSubstr("state 'kv.0' holds 4 heads of 4: expected 4 heads of 8"));
}

TEST_F(GraphErrors, DuplicateNodeName) {
  const std::string e = edited("{name: \"blk.{i}.ffn_up\"", "{name: \"blk.{i}.ffn_gate\"");
  EXPECT_THAT(e, HasSubstr("node name 'blk.0.ffn_gate' is already used at " + path_ + ":"));
}

TEST_F(GraphErrors, UnknownSetParameter) {
  graph::LoadOptions o;
  o.set = {{"n_layers", "2"}};
  EXPECT_THAT(edited("graph: decode", "graph: decode", o),
              HasSubstr("--set n_layers=2: expected the name of one of the graph's params"));
  EXPECT_THAT(edited("graph: decode", "graph: decode", o), HasSubstr("did you mean 'n_layer'?"));
}

TEST_F(GraphErrors, UnknownTopLevelKey) {
  const std::string e = edited("outputs: [logits]", "output: [logits]");
  EXPECT_THAT(e, HasSubstr(at("output:") + "unknown top-level key 'output'"));
  EXPECT_THAT(e, HasSubstr("(did you mean 'outputs'?)"));
}

TEST_F(GraphErrors, ExtendsMissingFile) {
  text_ = "graph: child\nextends: nothere.yaml\n";
  const std::string e = load_error(path_, text_, model_);
  EXPECT_THAT(e, HasSubstr(at("nothere") + "extends: expected an existing graph file, found no file at '"));
}

TEST_F(GraphErrors, RecursiveExtends) {
  write_text(dir_ / "b.yaml", "graph: b\nextends: a.yaml\n");
  const std::string a = (dir_ / "a.yaml").string();
  text_ = "graph: a\nextends: b.yaml\n";
  const std::string e = load_error(a, text_, model_);
  EXPECT_THAT(e, HasSubstr("b.yaml:2:10: recursive extends: expected a chain of distinct files, found "
                           "a.yaml -> b.yaml -> a.yaml"));
}

TEST_F(GraphErrors, ExtendsEditOfMissingNode) {
  write_text(dir_ / "base.yaml", base_);
  text_ = "graph: child\nextends: base.yaml\nremove: [lm_haed]\n";
  const std::string e = load_error(path_, text_, model_);
  EXPECT_THAT(e, HasSubstr(at("lm_haed") + "remove: expected the name of a node in the base graph, found "
                           "'lm_haed' (did you mean 'lm_head'?)"));
}

TEST_F(GraphErrors, NothingInTheFileIsOptionalToValidate) {
  // An error in the last node is found although everything before it is fine: loading is all
  // or nothing.
  const std::string e = edited("out: logits}", "out: logits, bias: \"nope.bias\"}");
  EXPECT_THAT(e, HasSubstr("node 'lm_head': tensor 'nope.bias' not in the model"));
}

}  // namespace
}  // namespace gguflow::test
