// `extends` chains: every edit (remove, replace, insert_before, insert_after, append) applied by a
// graph one level above its base (depth 2) and two levels above (depth 3), where the list being
// edited already holds nodes of two files. Errors in inherited nodes must still name the file
// and the line and column they were written at.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/gguf/gguf_file.h"
#include "tests/graph/graph_test_util.h"

namespace gguflow::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A chain of adds over stories260K's embedding; the layers and the lm-head are not part of it.
const std::string kBase =
    "graph: base\n"
    "params: {eps: 1e-5}\n"
    "inputs: {tokens: {dtype: i32, shape: [T]}}\n"
    "outputs: [y]\n"
    "unused: ['blk.*', output.weight]   # this test graph stops at the final norm\n"
    "nodes:\n"
    "  - {name: e, op: embed, tokens: tokens, weight: token_embd.weight, out: x}\n"
    "  - {name: a, op: add, in: [x, x], out: x}\n"
    "  - {name: b, op: add, in: [x, x], out: x}\n"
    "  - {name: n, op: rmsnorm, in: x, weight: output_norm.weight, eps: $eps, out: y}\n";

// Depth 2: appends two nodes after the base's last one.
const std::string kMid =
    "graph: mid\n"
    "extends: base.yaml\n"
    "append:\n"
    "  - {name: p, op: add, in: [y, y], out: y}\n"
    "  - {name: q, op: add, in: [y, y], out: y}\n";

class GraphExtends : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(data_path("models/stories260K.gguf")))
      GTEST_SKIP() << "test data not found: " << data_path("models/stories260K.gguf")
                   << " (set GGUFLOW_TEST_DATA to the shared/data folder)";
    model_ = GgufFile::open(data_path("models/stories260K.gguf").string());
    dir_ = temp_dir();
    write_text(dir_ / "base.yaml", kBase);
    write_text(dir_ / "mid.yaml", kMid);
  }
  // Node names of `text` written as NAME and loaded.
  std::vector<std::string> names(const std::string& name, const std::string& text) {
    write_text(dir_ / name, text);
    const graph::Graph g = graph::load_graph((dir_ / name).string(), model_);
    std::vector<std::string> out;
    for (const auto& n : g.nodes) out.push_back(n.name);
    return out;
  }
  std::string error(const std::string& name, const std::string& text) {
    return load_error(dir_ / name, text, model_);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::shared_ptr<const GgufFile> model_;
  std::filesystem::path dir_;
};

const std::string kOnBase = "graph: d2\nextends: base.yaml\n";
const std::string kOnMid = "graph: d3\nextends: mid.yaml\n";
const std::string kNewNode = "{name: z, op: add, in: [x, x], out: x}";

TEST_F(GraphExtends, RemoveAtDepth2And3) {
  EXPECT_THAT(names("d2.yaml", kOnBase + "remove: [a]\n"), ElementsAre("e", "b", "n"));
  // Removing a base node shifts the nodes mid appended: they must keep their own content.
  EXPECT_THAT(names("d3.yaml", kOnMid + "remove: [a]\n"), ElementsAre("e", "b", "n", "p", "q"));
  EXPECT_THAT(names("d3b.yaml", kOnMid + "remove: [p]\n"), ElementsAre("e", "a", "b", "n", "q"));
}

TEST_F(GraphExtends, ReplaceAtDepth2And3) {
  const std::string replace_b = "replace:\n  - {name: b, op: mul, in: [x, x], out: x}\n";
  write_text(dir_ / "d2.yaml", kOnBase + replace_b);
  const graph::Graph g2 = graph::load_graph(path("d2.yaml"), model_);
  EXPECT_EQ(g2.nodes[static_cast<size_t>(g2.find_node("b"))].schema->name, std::string("mul"));

  const std::string text = kOnMid + "replace:\n  - {name: p, op: mul, in: [y, y], out: y}\n";
  write_text(dir_ / "d3.yaml", text);
  const graph::Graph g3 = graph::load_graph(path("d3.yaml"), model_);
  const graph::Node& p = g3.nodes[static_cast<size_t>(g3.find_node("p"))];
  EXPECT_EQ(p.schema->name, std::string("mul"));
  EXPECT_EQ(p.where.to_string(), location_of(path("d3.yaml"), text, "{name: p"));
  EXPECT_EQ(g3.nodes[static_cast<size_t>(g3.find_node("q"))].schema->name, std::string("add"));
}

// Two replacements of one node in one file: the second won silently.
TEST_F(GraphExtends, ReplacingANodeTwiceInOneFileIsRefused) {
  const std::string text = kOnBase + "replace:\n  - {name: b, op: mul, in: [x, x], out: x}\n"
                                     "  - {name: b, op: add, in: [x, x], out: x}\n";
  EXPECT_THAT(error("twice.yaml", text), HasSubstr(location_of(path("twice.yaml"), text, "{name: b, op: add") +
                                                  ": replace: node 'b' is replaced twice in this file"));
}

TEST_F(GraphExtends, InsertBeforeAtDepth2And3) {
  EXPECT_THAT(names("d2.yaml", kOnBase + "insert_before:\n  b: [" + kNewNode + "]\n"),
              ElementsAre("e", "a", "z", "b", "n"));
  EXPECT_THAT(names("d3.yaml", kOnMid + "insert_before:\n  a: [" + kNewNode + "]\n"),
              ElementsAre("e", "z", "a", "b", "n", "p", "q"));
}

TEST_F(GraphExtends, InsertAfterAtDepth2And3) {
  EXPECT_THAT(names("d2.yaml", kOnBase + "insert_after:\n  a: [" + kNewNode + "]\n"),
              ElementsAre("e", "a", "z", "b", "n"));
  EXPECT_THAT(names("d3.yaml", kOnMid + "insert_after:\n  a: [" + kNewNode + "]\n"),
              ElementsAre("e", "a", "z", "b", "n", "p", "q"));
}

TEST_F(GraphExtends, AppendAtDepth2And3) {
  const std::string append = "append:\n  - {name: r, op: add, in: [y, y], out: y}\n";
  EXPECT_THAT(names("d2.yaml", kOnBase + append), ElementsAre("e", "a", "b", "n", "r"));
  EXPECT_THAT(names("d3.yaml", kOnMid + append), ElementsAre("e", "a", "b", "n", "p", "q", "r"));
}

TEST_F(GraphExtends, EveryEditAtDepth3LeavesTheFilesUnchanged) {
  // A chain edited twice over: each level's nodes keep their content and their place.
  const std::string top = kOnMid +
                          "remove: [b]\n"
                          "insert_before:\n  q: [{name: s, op: mul, in: [y, y], out: y}]\n"
                          "insert_after:\n  e: [" + kNewNode + "]\n"
                          "append:\n  - {name: r, op: add, in: [y, y], out: y}\n";
  EXPECT_THAT(names("d3.yaml", top), ElementsAre("e", "z", "a", "n", "p", "s", "q", "r"));
  // Loading the same chain again gives the same graph (nothing was rewritten in memory).
  EXPECT_THAT(names("d3.yaml", top), ElementsAre("e", "z", "a", "n", "p", "s", "q", "r"));
}

TEST_F(GraphExtends, ErrorsInInheritedNodesNameTheirOwnFile) {
  // q, written in mid.yaml, reads a tensor nothing defines; the top graph shifts it by a remove.
  const std::string mid = replace_once(kMid, "{name: q, op: add, in: [y, y]", "{name: q, op: add, in: [y, zz]");
  write_text(dir_ / "mid.yaml", mid);
  const std::string e = error("d3.yaml", kOnMid + "remove: [a]\n");
  EXPECT_THAT(e, HasSubstr(location_of(path("mid.yaml"), mid, "zz") + ": node 'q': 'zz' is used but never defined"));

  // A duplicate name is reported where each copy was written.
  const std::string dup = kOnMid + "remove: [a]\nappend:\n  - {name: p, op: add, in: [y, y], out: y}\n";
  const std::string d = error("dup.yaml", dup);
  EXPECT_THAT(d, HasSubstr(location_of(path("dup.yaml"), dup, "{name: p") + ": node name 'p' is already used at " +
                           location_of(path("mid.yaml"), mid, "{name: p")));
}

TEST_F(GraphExtends, ShippedEmbedGraphCanBeExtendedAndEdited) {
  // The reported case: embed.yaml extends decode.yaml; editing it once more used to find a
  // second 'normalize' node.
  const std::string embed = (source_dir() / "graphs" / "embed.yaml").string();
  const std::string head = "graph: b\nextends: '" + embed + "'\n";
  const std::string removed =
      names("b.yaml", head + "unused: [output_norm.weight]   # the final norm is removed\nremove: [output_norm]\n")
          .back();
  EXPECT_EQ(removed, "normalize");
  const std::vector<std::string> inserted =
      names("c.yaml", head + "insert_after:\n  output_norm: [{name: twice, op: add, in: [x, x], out: x}]\n");
  ASSERT_GE(inserted.size(), 4u);
  EXPECT_THAT(std::vector<std::string>(inserted.end() - 4, inserted.end()),
              ElementsAre("output_norm", "twice", "pool", "normalize"));
}

}  // namespace
}  // namespace gguflow::test
