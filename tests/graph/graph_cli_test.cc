// The `gguflow lower` and `gguflow graph` commands, run as a user would: from another folder,
// with the default graph, with a user-written graph in a temp dir, and drawing pictures.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/graph/graph_test_util.h"

namespace gguflow::test {
namespace {

using ::testing::HasSubstr;

std::string gguflow() { return "'" + (binary_dir() / "gguflow").string() + "'"; }
std::string model(const std::string& name) { return "'" + data_path("models/" + name).string() + "'"; }

TEST(GraphCli, LowerFromAnyFolderUsesTheShippedDecodeGraph) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  const auto dir = temp_dir();
  std::string out, err;
  ASSERT_EQ(run_command("cd '" + dir.string() + "' && " + gguflow() + " lower " + model("stories260K.gguf") +
                            " -o lowered.yaml",
                        &out, &err),
            0)
      << err;
  const std::string text = read_text(dir / "lowered.yaml");
  EXPECT_THAT(text, HasSubstr("# Lowered by `gguflow lower` from decode.yaml for stories260K.gguf."));
  EXPECT_THAT(text, HasSubstr("- name: blk.4.ffn_down"));
  // --set changes the expansion. Fewer layers leave tensors unread: refused by the shipped
  // graph, accepted by one that lists them as unused.
  EXPECT_EQ(run_command(gguflow() + " lower " + model("stories260K.gguf") + " --set n_layer=1", &out, &err), 1);
  EXPECT_THAT(err, HasSubstr("blk.1.attn_q.weight, "));
  write_text(dir / "one_layer.yaml", "graph: one\nextends: '" + decode_yaml().string() +
                                         "'\nunused: ['blk.1.*', 'blk.2.*', 'blk.3.*', 'blk.4.*']\n");
  ASSERT_EQ(run_command(gguflow() + " lower " + model("stories260K.gguf") + " --set n_layer=1 --graph '" +
                            (dir / "one_layer.yaml").string() + "'",
                        &out, &err),
            0)
      << err;
  EXPECT_THAT(out, HasSubstr("n_layer: 1"));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("- name: blk.1.")));
  ASSERT_EQ(run_command(gguflow() + " lower " + model("stories260K.gguf") + " --graph '" +
                            (dir / "lowered.yaml").string() + "'",
                        &out, &err),
            0)
      << err;
  EXPECT_THAT(out, HasSubstr("- name: blk.4.ffn_down"));
}

// A lowered file generates exactly as its template, sampling stage included: same text for the
// same seed with the template's default (non-greedy) sampler settings.
TEST(GraphCli, LoweredFileSamplesLikeItsTemplate) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  const auto dir = temp_dir();
  std::string out, err;
  ASSERT_EQ(run_command(gguflow() + " lower " + model("stories260K.gguf") + " -o '" +
                            (dir / "lowered.yaml").string() + "'",
                        &out, &err),
            0)
      << err;
  EXPECT_THAT(read_text(dir / "lowered.yaml"), HasSubstr("sampler:\n  input: logits\n  temperature: 0.8\n"));
  const std::string args = " --model " + model("stories260K.gguf") + " --prompt 'Once upon a time' -n 24 --seed 7";
  std::string from_template, from_lowered;
  ASSERT_EQ(run_command(gguflow() + " run" + args, &from_template, &err), 0) << err;
  ASSERT_EQ(run_command(gguflow() + " run '" + (dir / "lowered.yaml").string() + "'" + args, &from_lowered, &err), 0)
      << err;
  EXPECT_EQ(from_lowered, from_template);
  EXPECT_FALSE(from_template.empty());
}

TEST(GraphCli, ErrorsAreOneLineWithExitStatus1) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  std::string out, err;
  EXPECT_EQ(run_command(gguflow() + " lower " + model("stories260K.gguf") + " --set nope=1", &out, &err), 1);
  EXPECT_THAT(err, HasSubstr("gguflow lower: error: --set nope=1: expected the name of one of the graph's params"));
  EXPECT_EQ(run_command(gguflow() + " lower " + model("stories260K-q8_0-v2-unaligned.gguf"), &out, &err), 1);
  EXPECT_THAT(err, HasSubstr("gguflow lower: error: "));
}

// `lower` and `graph` read a generating graph's sampler section as `run` does: a graph they call
// valid runs (a bad value or a misspelled input passed both and failed only in `run`).
TEST(GraphCli, LowerAndGraphCheckTheSamplerSectionAsRunDoes) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  const auto dir = temp_dir();
  for (const std::string section : {"sampler: {temperature: hot}\n", "sampler: {input: logitz}\n"}) {
    write_text(dir / "g.yaml", "graph: bad_sampler\nextends: '" + decode_yaml().string() + "'\n" + section);
    const std::string graph = "'" + (dir / "g.yaml").string() + "'";
    std::string out, err;
    EXPECT_EQ(run_command(gguflow() + " lower " + model("stories260K.gguf") + " --graph " + graph, &out, &err), 1) << section;
    EXPECT_THAT(err, HasSubstr("g.yaml:3:")) << err;
    EXPECT_EQ(run_command(gguflow() + " graph " + graph + " -m " + model("stories260K.gguf"), &out, &err), 1) << section;
    EXPECT_THAT(err, HasSubstr("sampler:")) << err;
  }
}

// A user's own graph: decode with the SwiGLU FFN replaced by one plain matmul.
TEST(GraphCli, UserGraphReplacingTheFfnByOneMatmul) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  const auto dir = temp_dir();
  const std::string edits =
      "remove: [\"blk.{i}.ffn_gate\", \"blk.{i}.ffn_up\", \"blk.{i}.ffn_act\"]\n"
      "replace:\n"
      "  - {name: \"blk.{i}.ffn_down\", op: matmul, in: h, weight: \"WEIGHT\", out: f}\n"
      "unused: ['blk.*.ffn_gate.weight', 'blk.*.ffn_up.weight', 'blk.*.ffn_down.weight']   # one matmul\n";
  auto write_user_graph = [&](const std::string& file, const std::string& weight) {
    std::string text = "graph: plain_ffn\nextends: '" + decode_yaml().string() + "'\n" +
                       replace_once(edits, "WEIGHT", weight);
    write_text(dir / file, text);
    return (dir / file).string();
  };
  // ffn_down is [n_ff, n_embd] = [172, 64]: it cannot read h [64, T].
  const std::string bad = write_user_graph("bad.yaml", "blk.{i}.ffn_down.weight");
  std::string out, err;
  EXPECT_EQ(run_command(gguflow() + " graph '" + bad + "' --model " + model("stories260K.gguf"), &out, &err), 1);
  EXPECT_THAT(err, HasSubstr(bad + ":5:5: shape mismatch in node 'blk.0.ffn_down' (op matmul): inner dimension "
                             "mismatch: expected the input's ne0 to equal the weight's ne0 (172), found input 'h' "
                             "[64, T] and weight 'blk.0.ffn_down.weight' [172, 64]"));
  // A square [64, 64] matrix fits: the graph validates and lowers without any silu_mul.
  const std::string good = write_user_graph("good.yaml", "blk.{i}.attn_output.weight");
  ASSERT_EQ(run_command(gguflow() + " graph '" + good + "' --model " + model("stories260K.gguf"), &out, &err), 0)
      << err;
  EXPECT_THAT(out, HasSubstr("valid for"));
  // embed + 5 layers of (15 - 3) nodes + output_norm + lm_head; the replaced node is on line 5.
  EXPECT_THAT(out, HasSubstr(std::to_string(1 + 5 * (15 - 3) + 2) + " nodes"));
  ASSERT_EQ(run_command(gguflow() + " lower " + model("stories260K.gguf") + " --graph '" + good + "'", &out, &err), 0)
      << err;
  EXPECT_THAT(out, ::testing::Not(HasSubstr("op: silu_mul")));
  EXPECT_THAT(out, HasSubstr("- name: blk.2.ffn_down\n    op: matmul\n    group: blk.2\n    x: h\n"
                             "    weight: {tensor: blk.2.attn_output.weight, type: F32, dims: [64, 64]}"));
}

TEST(GraphCli, DotPictureHasOpsShapesColoursAndClusters) {
  GGUFLOW_REQUIRE_DATA("models/synth-qwen2-tiny-Q4_K_M.gguf");
  std::string out, err;
  const std::string graph = "'" + decode_yaml().string() + "'";
  ASSERT_EQ(run_command(gguflow() + " graph " + graph + " --model " + model("synth-qwen2-tiny-Q4_K_M.gguf") + " --dot",
                        &out, &err),
            0)
      << err;
  EXPECT_THAT(out, HasSubstr("digraph \"decode\" {"));
  EXPECT_THAT(out, HasSubstr("subgraph cluster_1 {\n    label=\"blk.1\""));
  EXPECT_THAT(out, HasSubstr("\"node:blk.1.attn_q\" [fillcolor=\"#b3cde3\", label=\"blk.1.attn_q\nmatmul → [384, T]\n"
                             "blk.1.attn_q.weight Q5_0\nblk.1.attn_q.bias F32\"]"));
  EXPECT_THAT(out, HasSubstr("\"node:blk.0.ffn_residual\" -> \"node:blk.1.attn_norm\" [label=\"x\"]"));
  EXPECT_THAT(out, HasSubstr("\"node:lm_head\" -> \"out:logits\""));

  ASSERT_EQ(run_command(gguflow() + " graph " + graph + " --model " + model("synth-qwen2-tiny-Q4_K_M.gguf") +
                            " --dot --collapse",
                        &out, &err),
            0);
  EXPECT_THAT(out, HasSubstr("\"group:blk.0\" [shape=box3d"));
  EXPECT_THAT(out, HasSubstr("15 ops: 2×add 1×attention 7×matmul 2×rmsnorm 2×rope 1×silu_mul"));
  EXPECT_THAT(out, HasSubstr("\"group:blk.0\" -> \"group:blk.1\""));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("node:blk.0.attn_q")));
}

TEST(GraphCli, SvgThroughGraphvizOrAClearMessage) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  const auto dir = temp_dir();
  // A name with a quote in it: the path went through a shell command line and broke it.
  const std::string svg = (dir / "Bob's decode.svg").string();
  const std::string command =
      gguflow() + " graph '" + decode_yaml().string() + "' --model " + model("stories260K.gguf") + " --svg \"" + svg + "\"";
  std::string out, err;
  if (run_command("command -v dot") == 0) {
    ASSERT_EQ(run_command(command, &out, &err), 0) << err;
    EXPECT_THAT(read_text(svg), HasSubstr("<svg"));
    EXPECT_EQ(err, "wrote " + svg + "\n");
  }
  // Without Graphviz on PATH the command says what is missing and how to get it.
  EXPECT_EQ(run_command("PATH=/nonexistent " + command, &out, &err), 1);
  EXPECT_THAT(err, HasSubstr("the Graphviz 'dot' program is not installed (on Debian: sudo apt-get install graphviz)"));
}

// A dot that exits before reading the whole DOT text (here at once, as one without its SVG
// plugin does): writing the rest raised SIGPIPE and killed gguflow with no message, leaving the
// output's temporary file. The graph must be larger than a pipe holds (64 KiB): 40 layers.
TEST(GraphCli, ADotThatExitsEarlyIsAnError) {
  const auto dir = temp_dir();
  const std::string deep = (dir / "deep.gguf").string();
  std::string out, err;
  ASSERT_EQ(run_command(gguflow() + " synth --arch llama --n-embd 64 --n-layer 40 --n-head 2 --n-ff 128 --n-vocab 300 "
                                    "--type F32 -o '" + deep + "'", &out, &err), 0) << err;
  std::filesystem::create_directories(dir / "bin");
  write_text(dir / "bin" / "dot", "#!/bin/sh\nexit 3\n");
  std::filesystem::permissions(dir / "bin" / "dot", std::filesystem::perms::owner_all);
  const std::string svg = (dir / "g.svg").string();
  const int status = run_command("PATH='" + (dir / "bin").string() + "':\"$PATH\" " + gguflow() + " graph '" +
                                     decode_yaml().string() + "' --model '" + deep + "' --svg '" + svg + "'",
                                 &out, &err);
  EXPECT_EQ(status, 1) << err;
  EXPECT_THAT(err, HasSubstr("'dot' failed (exit status 3)"));
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(entry.path().filename().string().find("g.svg"), std::string::npos) << entry.path();
}

// The SVG is written as every other output (OutputFile): it cannot replace the graph it draws,
// and a directory is refused with our message, not Graphviz's.
TEST(GraphCli, SvgCannotReplaceAnInput) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  const auto dir = temp_dir();
  const std::string graph = (dir / "g.yaml").string();
  write_text(graph, read_text(decode_yaml()));
  const std::string command = gguflow() + " graph '" + graph + "' --model " + model("stories260K.gguf") + " --svg ";
  std::string out, err;
  EXPECT_EQ(run_command(command + "'" + graph + "'", &out, &err), 1);
  EXPECT_THAT(err, HasSubstr(graph + ": this is an input of the command"));
  EXPECT_EQ(read_text(graph), read_text(decode_yaml()));
  EXPECT_EQ(run_command(command + "'" + dir.string() + "'", &out, &err), 1);
  EXPECT_EQ(err, "gguflow graph: error: " + dir.string() + ": expected an output file name, found a directory\n");
}

}  // namespace
}  // namespace gguflow::test
