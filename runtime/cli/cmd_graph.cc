// `gguflow graph GRAPH.yaml --model M (--dot | --svg FILE) [--collapse] [--set name=value]...`:
// validates a graph against a model and draws it.
#include <cstdio>
#include <string>

#include "runtime/cli/args.h"
#include "runtime/cli/commands.h"
#include "runtime/cli/shared_options.h"
#include "ops/error.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/graph/load.h"
#include "runtime/runner/generation_graph.h"
#include "runtime/graph/writers.h"

namespace gguflow::cli {

int run_graph(int argc, char** argv) {
  Args args("graph GRAPH.yaml --model MODEL.gguf [--dot] [--svg FILE] [--collapse] [--set name=value]...",
            "Validates a graph for a model and draws it: nodes labelled with op and output shape, "
            "coloured by op kind, repeat blocks as clusters (or single boxes with --collapse). "
            "Without --dot or --svg, prints a one-line summary.");
  args.positional("GRAPH.yaml", "the graph file").positional_count(1, 1)
      .option("-m,--model", "FILE", "the model to bind the graph to (required)").env("GGUFLOW_MODEL")
      .flag("--dot", "write Graphviz DOT to stdout")
      .option("--svg", "FILE", "render an SVG through Graphviz 'dot'")
      .flag("--collapse", "draw each repeat instance (e.g. blk.3) as one box")
      .option("--set", "NAME=VALUE", "override a graph parameter (repeatable)");
  if (!args.parse(argc, argv)) return 0;
  if (!args.has("--model")) throw usage_error("-m/--model: expected the GGUF model to bind the graph to, found none");

  auto model = GgufFile::open(args.get("--model"));
  graph::LoadOptions options;
  options.set = set_values(args);
  const graph::Graph g = graph::load_graph(args.positionals()[0], model, options);
  if (g.job != "embed") runner::checked_sampler_section(args.positionals()[0], g);  // as `run` would
  graph::DotOptions dot_options;
  dot_options.collapse = args.has("--collapse");

  if (args.has("--dot")) {
    const std::string dot = graph::graph_dot(g, dot_options);
    std::fwrite(dot.data(), 1, dot.size(), stdout);
  }
  if (args.has("--svg")) {
    graph::render_svg(graph::graph_dot(g, dot_options), args.get("--svg"));
    std::fprintf(stderr, "wrote %s\n", args.get("--svg").c_str());
  }
  if (!args.has("--dot") && !args.has("--svg"))
    std::printf("%s: valid for %s: %zu nodes, %zu tensors, %zu states\n", args.positionals()[0].c_str(),
                args.get("--model").c_str(), g.nodes.size(), g.tensors.size(), g.states.size());
  return 0;
}

}  // namespace gguflow::cli
