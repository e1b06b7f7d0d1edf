// Loading a graph: YAML (with extends) -> bound, validated, expanded `Graph` for one model.
// Nothing runs before this returns: every error in the file or against the model is found here.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/graph/graph.h"
#include "runtime/graph/graph_choice.h"

namespace gguflow::graph {

struct LoadOptions {
  // `--set name=value` overrides of declared params, in command-line order.
  std::vector<std::pair<std::string, std::string>> set;
  // Files searched, after the model, for weight tensors the model lacks (e.g. the low-rank KV
  // bases of a `gguflow kv calibrate` side file).
  std::vector<std::shared_ptr<const GgufFile>> weight_files;
  // What the caller runs the graph for (none: no job in particular): a graph whose `job:` names
  // the other one is refused (an embedding graph's vector is no logits to sample; a generation
  // graph's logits are no embedding).
  std::optional<Job> job;
};

// Reads `path` (and the files it extends), binds it to `model` and validates it.
// Throws gguflow::Error "FILE:LINE:COL: ..." naming what was expected and what was found; when
// the graph's `architectures:` leave out the model's general.architecture (a graph computes
// exactly the families it names: llama's graph on a gemma file would run, skipping gemma's
// embedding scale and GELU); when its `job:` is not options.job; and when the model holds tensors
// the graph neither reads nor lists as `unused:` (tensor_coverage.h).
Graph load_graph(const std::string& path, std::shared_ptr<const GgufFile> model,
                 const LoadOptions& options = {});
// The same for YAML text; `file` names it in messages and anchors relative `extends`.
Graph load_graph_text(const std::string& text, const std::string& file,
                      std::shared_ptr<const GgufFile> model, const LoadOptions& options = {});

// Splits "name=value" words (the values of repeated --set options). Throws for a word without '='.
std::vector<std::pair<std::string, std::string>> parse_set_options(const std::vector<std::string>& words);

// Finds a shipped graph such as "decode.yaml": next to the executable's source or install tree
// (<exe dir>/../../graphs, <exe dir>/../share/gguflow/graphs) or in the source tree this was
// built from. Throws naming the places looked at when none has it.
std::string find_shipped_graph(const std::string& file_name);
// The folder of the shipped graphs (the first of those places that exists), for graph_choice.h
// to scan. Throws naming the places looked at.
std::string shipped_graphs_dir();

}  // namespace gguflow::graph
