#include "runtime/runner/generation_graph.h"

#include "ops/error.h"
#include "runtime/exec/logits_output.h"
#include "runtime/graph/graph_choice.h"
#include "runtime/graph/sampler_section.h"
#include "runtime/runner/sampler_settings.h"

namespace gguflow::runner {

GenerationGraph load_generation_graph(std::shared_ptr<const GgufFile> file,
                                      const std::string& graph_path,
                                      const graph::LoadOptions& options) {
  GenerationGraph g;
  g.path = graph_path.empty() ? graph::default_graph_path(*file, graph::Job::kGenerate) : graph_path;
  graph::LoadOptions generating = options;
  generating.job = graph::Job::kGenerate;
  g.graph = std::make_shared<const graph::Graph>(graph::load_graph(g.path, file, generating));
  g.sampler = checked_sampler_section(g.path, *g.graph, &g.sets_seed);
  return g;
}

sampling::SamplerConfig checked_sampler_section(const std::string& path, const graph::Graph& graph,
                                                bool* sets_seed) {
  const graph::SamplerSection section = graph::load_sampler_section(path);
  if (graph::sampler_input_tensor(section, graph) != graph.outputs.front())
    throw error(path, ": sampler: input: expected the graph's first output '",
                graph.tensors[graph.outputs.front()].name, "' (the one a session returns), found '",
                section.input, "'");
  if (sets_seed) *sets_seed = section_sets_seed(section);
  return config_from_section(section);
}

void check_logits_output(const GenerationGraph& g, const exec::Session& session,
                         size_t tokenizer_vocab_size) {
  exec::check_logits_output(g.path, *g.graph, session, static_cast<int64_t>(tokenizer_vocab_size));
}

}  // namespace gguflow::runner
