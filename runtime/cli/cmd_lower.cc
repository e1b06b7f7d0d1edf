// `gguflow lower MODEL.gguf [--graph FILE] [-o OUT.yaml] [--set name=value]...`: binds a graph to
// a model and writes the fully expanded graph (itself a loadable graph file).
#include <cstdio>
#include <string>

#include "runtime/cli/args.h"
#include "runtime/cli/commands.h"
#include "runtime/cli/shared_options.h"
#include "ops/error.h"
#include "runtime/core/output_file.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/graph/graph_choice.h"
#include "runtime/graph/load.h"
#include "runtime/runner/generation_graph.h"
#include "runtime/graph/sampler_section.h"
#include "runtime/graph/writers.h"

namespace gguflow::cli {

int run_lower(int argc, char** argv) {
  Args args("lower (MODEL.gguf | -m MODEL.gguf) [--graph GRAPH.yaml] [-o OUT.yaml] [--set name=value]...",
            "Binds a YAML graph to a model and writes it fully expanded: every node, resolved "
            "parameters, every weight's type and dims, every activation's shape.");
  args.positional("MODEL.gguf", "the model to bind the graph to")
      .positional_count(0, 1)
      .option("--graph", "FILE", "graph template (default: the shipped graph for the model's architecture)")
      .option("-o,--output", "FILE", "write here instead of stdout");
  model_alias_option(args);
  set_option(args);
  if (!args.parse(argc, argv)) return 0;

  const std::string model_path = model_argument(args, 0, nullptr);
  auto model = GgufFile::open(model_path);
  const std::string graph_path =
      args.has("--graph") ? args.get("--graph") : graph::default_graph_path(*model, graph::Job::kGenerate);
  graph::LoadOptions options;
  options.set = set_values(args);
  const graph::Graph g = graph::load_graph(graph_path, model, options);
  if (g.job != "embed") runner::checked_sampler_section(graph_path, g);  // as `run` would
  // The sampling stage is not part of the bound graph; carry it over so that the lowered file
  // generates exactly as the template does. A graph without the stage's input among its outputs
  // (embed.yaml inherits decode's section but has no logits) has nothing to sample: omit it.
  const graph::SamplerSection sampler = graph::load_sampler_section(graph_path);
  bool samples = sampler.present && sampler.input.empty();
  for (int t : g.outputs) samples = samples || (sampler.present && g.tensors[static_cast<size_t>(t)].name == sampler.input);
  const std::string text = graph::lowered_yaml(g) + (samples ? graph::sampler_section_yaml(sampler) : "");

  if (!args.has("--output")) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  const std::string out_path = args.get("--output");
  OutputFile out(out_path);
  if (std::fwrite(text.data(), 1, text.size(), out.stream()) != text.size())
    throw error(out_path, ": write failed");
  out.commit();
  std::fprintf(stderr, "lowered %s for %s: %zu nodes, %zu states -> %s\n", graph_path.c_str(),
               model_path.c_str(), g.nodes.size(), g.states.size(), out_path.c_str());
  return 0;
}

}  // namespace gguflow::cli
