// The graph a generating command runs (`run`, `serve`): the one --graph names or the shipped
// graph for the model's architecture, bound to the model, with the sampling defaults of its
// `sampler:` section, checked to end in logits over the vocabulary.
#pragma once

#include <memory>
#include <string>

#include "runtime/exec/session.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/graph/graph.h"
#include "runtime/graph/load.h"
#include "runtime/sampling/sampler.h"

namespace gguflow::runner {

struct GenerationGraph {
  std::string path;
  std::shared_ptr<const graph::Graph> graph;
  sampling::SamplerConfig sampler;  // the section's settings over SamplerConfig's defaults
  bool sets_seed = false;           // the section chose a seed
};

// Loads and binds `graph_path` ("" = the shipped generate graph for the architecture). Throws
// gguflow::Error for a bad graph or sampler section, or a sampler reading another tensor than
// the graph's first output.
GenerationGraph load_generation_graph(std::shared_ptr<const GgufFile> file,
                                      const std::string& graph_path,
                                      const graph::LoadOptions& options);

// The `sampler:` section of the graph file `path` bound as `graph`, as a generating command
// reads it: the sampled tensor must be the graph's first output, every setting a valid value.
// Throws gguflow::Error at the section's place otherwise. `lower` and `graph` check the same
// (for graphs whose job is not "embed"), so a graph they call valid also runs.
sampling::SamplerConfig checked_sampler_section(const std::string& path, const graph::Graph& graph,
                                                bool* sets_seed = nullptr);

// Throws unless the session's output rows are logits over the model's vocabulary (its n_vocab
// param, else the tokenizer's size): an embedding graph's pooled vector is no thing to sample.
void check_logits_output(const GenerationGraph& g, const exec::Session& session,
                         size_t tokenizer_vocab_size);

}  // namespace gguflow::runner
