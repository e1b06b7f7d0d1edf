// The default graph of a model: the shipped graph that declares the model's
// `general.architecture` under `architectures:` and the job under `job:`. This is the one place
// that maps a model to a graph; every command without --graph asks it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runtime/gguf/gguf_file.h"

namespace gguflow::graph {

enum class Job { kGenerate, kEmbed };
std::string_view job_name(Job job);  // "generate", "embed": the values of `job:`

// What one graph file declares (through `extends` for the architectures).
struct GraphClaim {
  std::string path;
  std::vector<std::string> architectures;
  std::string job;  // "" when the graph is a default for nothing (an opt-in variant)
};

// The claims of every *.yaml directly in `dir`, sorted by file name.
std::vector<GraphClaim> read_graph_claims(const std::string& dir);

// Throws gguflow::Error naming both files when two claims share an (architecture, job).
void check_unique_claims(const std::vector<GraphClaim>& claims);

// The path of the claim for (`architecture`, `job`). Throws naming the model (`model_name`),
// its architecture and every claim when none matches.
std::string choose_graph(const std::vector<GraphClaim>& claims, const std::string& architecture, Job job,
                         const std::string& model_name);

// choose_graph over the shipped graphs (load.h shipped_graphs_dir), after check_unique_claims.
std::string default_graph_path(const GgufFile& model, Job job);

}  // namespace gguflow::graph
