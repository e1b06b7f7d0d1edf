// Semantics of the graph language on small graphs and the shipped decode graph: SSA versions,
// order-free single assignments, params and overrides, optional weights and fallbacks, extends
// edits, pruning of nodes nothing needs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/model_hparams.h"
#include "tests/graph/graph_test_util.h"
#include "tests/support/error_of.h"

namespace gguflow::test {
namespace {

using graph::Graph;

std::shared_ptr<const GgufFile> stories() {
  return GgufFile::open(data_path("models/stories260K.gguf").string());
}

// A two-node graph over stories260K's tensors, with `extra` appended to its node list.
std::string tiny_graph(const std::string& extra = "") {
  return "graph: tiny\n"
         "params: {n_embd: \"{arch}.embedding_length\", eps: 1e-5}\n"
         "inputs: {tokens: {dtype: i32, shape: [T]}}\n"
         "outputs: [y]\n"
         "unused: ['blk.*', output.weight]   # only the embedding and the final norm\n"
         "nodes:\n"
         "  - {name: e, op: embed, tokens: tokens, weight: token_embd.weight, out: x}\n"
         "  - {name: n, op: rmsnorm, in: x, weight: output_norm.weight, eps: $eps, out: y}\n" +
         extra;
}

TEST(GraphLanguage, SsaVersionsFollowReassignment) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  const Graph g = graph::load_graph(decode_yaml().string(), stories());
  const ModelHparams hp = read_model_hparams(*g.model_file);
  // x: embed, 2 residual adds per layer, output_norm.
  EXPECT_EQ(g.tensors[static_cast<size_t>(g.find_tensor("x"))].version, 2 * hp.n_layer + 1);
  // Layer 1's attn_norm reads the x written by layer 0's ffn_residual.
  const auto& norm1 = g.nodes[static_cast<size_t>(g.find_node("blk.1.attn_norm"))];
  const auto& x_in = g.tensors[static_cast<size_t>(norm1.input("x"))];
  EXPECT_EQ(g.nodes[static_cast<size_t>(x_in.producer)].name, "blk.0.ffn_residual");
  EXPECT_EQ(x_in.id(), "x@2");
  // Every node reads only tensors produced earlier in the list (topological order).
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int t : g.nodes[i].inputs)
      if (t >= 0) {
        EXPECT_LT(g.tensors[static_cast<size_t>(t)].producer, static_cast<int>(i)) << g.nodes[i].name;
      }
}

TEST(GraphLanguage, SingleAssignmentsMayBeListedInAnyOrder) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  const std::string text =
      "graph: reversed\n"
      "params: {eps: 1e-5}\n"
      "inputs: {tokens: {dtype: i32, shape: [T]}}\n"
      "outputs: [y]\n"
      "unused: ['blk.*', output.weight]   # only the embedding and the final norm\n"
      "nodes:\n"
      "  - {name: n, op: rmsnorm, in: x, weight: output_norm.weight, eps: $eps, out: y}\n"
      "  - {name: e, op: embed, tokens: tokens, weight: token_embd.weight, out: x}\n";
  const Graph g = graph::load_graph_text(text, "reversed.yaml", stories());
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].name, "e");
  EXPECT_EQ(g.nodes[1].name, "n");
}

TEST(GraphLanguage, UnusedNodesArePruned) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  const Graph g = graph::load_graph_text(
      tiny_graph("  - {name: unused, op: matmul, in: x, weight: output.weight, out: z}\n"), "t.yaml", stories());
  EXPECT_EQ(g.find_node("unused"), -1);
  EXPECT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.tensors[static_cast<size_t>(g.outputs[0])].shape.to_string(), "[64, T]");
}

TEST(GraphLanguage, ParamsFromMetadataAndOverrides) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  auto model = stories();
  const ModelHparams hp = read_model_hparams(*model);
  const Graph g = graph::load_graph(decode_yaml().string(), model);
  EXPECT_EQ(g.model.arch, "llama");
  EXPECT_EQ(g.model.n_layer, hp.n_layer);
  EXPECT_EQ(g.model.n_embd, hp.n_embd);
  EXPECT_EQ(g.model.n_head, hp.n_head);
  EXPECT_EQ(g.model.n_head_kv, hp.n_head_kv);
  EXPECT_EQ(g.model.head_dim, hp.head_dim);
  EXPECT_EQ(g.model.n_ff, hp.n_ff);
  EXPECT_EQ(g.model.n_vocab, hp.n_vocab);
  EXPECT_EQ(g.model.n_ctx_train, hp.n_ctx_train);
  EXPECT_EQ(g.model.n_rot, hp.n_rot);
  EXPECT_DOUBLE_EQ(g.model.rope_base, hp.rope_freq_base);  // absent in the file: the 10000 default
  EXPECT_FLOAT_EQ(static_cast<float>(g.model.eps), static_cast<float>(hp.rms_eps));
  EXPECT_EQ(g.model.rope_mode, "normal");
  ASSERT_EQ(g.states.size(), static_cast<size_t>(hp.n_layer));
  EXPECT_EQ(g.states[3].name, "kv.3");
  EXPECT_EQ(g.states[3].n_head_kv, hp.n_head_kv);
  EXPECT_EQ(g.states[3].head_dim, hp.head_dim);

  graph::LoadOptions o;
  o.set = graph::parse_set_options({"n_layer=2", "rope_base=5e5"});
  // Two of the five layers leave three unread: refused unless the graph says so.
  EXPECT_THAT(error_of([&] { graph::load_graph(decode_yaml().string(), model, o); }),
              ::testing::HasSubstr("blk.2.attn_q.weight"));
  const std::string two_layers = "graph: two\nextends: '" + decode_yaml().string() +
                                 "'\nunused: ['blk.2.*', 'blk.3.*', 'blk.4.*']\n";
  const Graph two = graph::load_graph_text(two_layers, (temp_dir() / "two.yaml").string(), model, o);
  EXPECT_EQ(two.model.n_layer, 2);
  EXPECT_EQ(two.states.size(), 2u);
  EXPECT_EQ(two.find_node("blk.2.attn_q"), -1);
  EXPECT_DOUBLE_EQ(two.nodes[static_cast<size_t>(two.find_node("blk.1.rope_k"))].attrs.get_float("base"), 5e5);
  EXPECT_THROW(graph::parse_set_options({"n_layer"}), gguflow::Error);
}

TEST(GraphLanguage, ExpressionsArithmeticFallbackAndDim) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  const std::string text =
      "graph: expr\n"
      "params:\n"
      "  a: \"(7 + 3) * 2 - 4 / 3\"\n"          // 20 - 1 (integer division)
      "  b: \"missing.key ?? other.missing ?? a + 0.5\"\n"
      "  c: \"dim(token_embd.weight, 1) % 100\"\n"
      "  d: \"-a\"\n"
      "  s: {switch: \"{arch}\", cases: {llama: yes_llama}, default: other}\n"
      "  t: {switch: missing.key, cases: {x: 1}, default: 9}\n"
      "  u: \"'text'\"\n"
      "inputs: {tokens: {dtype: i32, shape: [T]}}\n"
      "outputs: [x]\n"
      "unused: ['*norm.weight', 'blk.*', output.weight]   # only the embedding\n"
      "nodes:\n"
      "  - {name: e, op: embed, tokens: tokens, weight: token_embd.weight, out: x}\n";
  const Graph g = graph::load_graph_text(text, "expr.yaml", stories());
  EXPECT_EQ(std::get<int64_t>(g.find_param("a")->value), 19);
  EXPECT_DOUBLE_EQ(std::get<double>(g.find_param("b")->value), 19.5);
  EXPECT_EQ(std::get<int64_t>(g.find_param("c")->value), 512 % 100);
  EXPECT_EQ(std::get<int64_t>(g.find_param("d")->value), -19);
  EXPECT_EQ(std::get<std::string>(g.find_param("s")->value), "yes_llama");
  EXPECT_EQ(std::get<int64_t>(g.find_param("t")->value), 9);
  EXPECT_EQ(std::get<std::string>(g.find_param("u")->value), "text");
}

// Per-layer values from the repeat variable: gemma2's sliding even layers, gemma3's global
// every sixth layer, a query scale from sqrt, all inside the decode graph's repeat block.
TEST(GraphLanguage, ConditionalAttributesFollowTheLayerIndex) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  std::string text = read_text(decode_yaml());
  text = replace_once(text, "  n_rot:", "  n_swa: 16\n  n_rot:");
  text = replace_once(text, "cache: \"kv.{i}\",",
                      "cache: \"kv.{i}\", window: \"${i % 2 == 0 ? n_swa : 0}\", softcap: "
                      "\"${sqrt(n_swa)}\", scale: \"${1.0 / sqrt(head_dim)}\",");
  text = replace_once(text, "n_rot: $n_rot, base: $rope_base",
                      "n_rot: $n_rot, base: \"${(i + 1) % 3 != 0 ? 10000.0 : rope_base * 2}\"");
  const Graph g = graph::load_graph_text(text, "layers.yaml", stories());
  const ModelHparams hp = read_model_hparams(*g.model_file);
  ASSERT_GE(hp.n_layer, 3);
  for (int64_t i = 0; i < hp.n_layer; ++i) {
    const std::string blk = "blk." + std::to_string(i);
    const auto& attn = g.nodes[static_cast<size_t>(g.find_node(blk + ".attention"))].attrs;
    EXPECT_EQ(attn.get_int("window"), i % 2 == 0 ? 16 : 0) << blk;
    EXPECT_DOUBLE_EQ(attn.get_float("softcap"), 4.0);
    EXPECT_DOUBLE_EQ(attn.get_float("scale"), 1.0 / std::sqrt(double(hp.head_dim)));
    const auto& rope = g.nodes[static_cast<size_t>(g.find_node(blk + ".rope_q"))].attrs;
    EXPECT_DOUBLE_EQ(rope.get_float("base"), (i + 1) % 3 != 0 ? 10000.0 : 2 * hp.rope_freq_base) << blk;
  }
}

TEST(GraphLanguage, OptionalBiasesAndTiedOutputFollowTheModel) {
  GGUFLOW_REQUIRE_DATA("models/synth-qwen2-tiny-f32.gguf");
  auto qwen = GgufFile::open(data_path("models/synth-qwen2-tiny-f32.gguf").string());
  const Graph q = graph::load_graph(decode_yaml().string(), qwen);
  const auto& q_proj = q.nodes[static_cast<size_t>(q.find_node("blk.1.attn_q"))];
  ASSERT_TRUE(q_proj.weight("bias").has_value());
  EXPECT_EQ(q_proj.weight("bias")->tensor, "blk.1.attn_q.bias");
  EXPECT_FALSE(q.nodes[static_cast<size_t>(q.find_node("blk.1.attn_output"))].weight("bias").has_value());
  EXPECT_EQ(q.nodes[static_cast<size_t>(q.find_node("lm_head"))].weight("weight")->tensor, "token_embd.weight");
  EXPECT_EQ(q.model.rope_mode, "neox");
  EXPECT_EQ(q.nodes[static_cast<size_t>(q.find_node("blk.0.rope_q"))].attrs.get_string("mode"), "neox");

  GGUFLOW_REQUIRE_DATA("models/synth-llama-tiny-f32.gguf");
  auto llama = GgufFile::open(data_path("models/synth-llama-tiny-f32.gguf").string());
  const Graph l = graph::load_graph(decode_yaml().string(), llama);
  EXPECT_FALSE(l.nodes[static_cast<size_t>(l.find_node("blk.1.attn_q"))].weight("bias").has_value());
  EXPECT_EQ(l.nodes[static_cast<size_t>(l.find_node("lm_head"))].weight("weight")->tensor, "output.weight");
  EXPECT_EQ(l.model.rope_mode, "normal");
}

TEST(GraphLanguage, ExtendsEditsByName) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  const auto dir = temp_dir();
  write_text(dir / "base.yaml", tiny_graph());
  write_text(dir / "child.yaml",
             "graph: child\n"
             "extends: base.yaml\n"
             "params: {eps: 1e-3}\n"           // overrides the base's eps
             "outputs: [w]\n"
             "insert_after:\n"
             "  e: [{name: scale, op: mul, in: [x, x], out: x}]\n"
             "replace:\n"
             "  - {name: n, op: rmsnorm, in: x, weight: output_norm.weight, eps: $eps, out: y}\n"
             "append:\n"
             "  - {name: head, op: matmul, in: y, weight: output.weight, out: w}\n");
  const Graph g = graph::load_graph((dir / "child.yaml").string(), stories());
  ASSERT_EQ(g.nodes.size(), 4u);
  EXPECT_EQ(g.nodes[1].name, "scale");
  EXPECT_DOUBLE_EQ(g.nodes[2].attrs.get_float("eps"), 1e-3);
  EXPECT_EQ(g.tensors[static_cast<size_t>(g.outputs[0])].shape.to_string(), "[512, T]");
  ASSERT_EQ(g.files.size(), 2u);

  write_text(dir / "removed.yaml", "graph: r\nextends: child.yaml\nremove: [head]\noutputs: [y]\n");
  const Graph r = graph::load_graph((dir / "removed.yaml").string(), stories());
  EXPECT_EQ(r.find_node("head"), -1);
  EXPECT_EQ(r.nodes.size(), 3u);
}

TEST(GraphLanguage, LowerCaseAttributesAreTyped) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  const std::string e = load_error(temp_dir() / "t.yaml",
                                   replace_once(tiny_graph(), "eps: $eps", "eps: small"), stories());
  EXPECT_THAT(e, ::testing::HasSubstr("attribute 'eps' of op rmsnorm: expected a number, found 'small'"));
}

}  // namespace
}  // namespace gguflow::test
