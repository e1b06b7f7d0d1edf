#include "runtime/exec/logits_output.h"

#include "ops/error.h"

namespace gguflow::exec {

void check_logits_output(const std::string& graph_path, const graph::Graph& graph, const Session& session,
                         int64_t fallback_vocab) {
  const int64_t n_vocab = graph.model.n_vocab > 0 ? graph.model.n_vocab
                          : fallback_vocab > 0    ? fallback_vocab
                                                  : session.n_vocab();
  const std::string& output = graph.tensors[static_cast<size_t>(graph.outputs.front())].name;
  if (!session.output_per_token() || session.output_width() != n_vocab)
    throw error(graph_path, ": expected the graph's output '", output, "' to be logits [", n_vocab,
                ", T] to choose tokens from, found ", session.output_width(), " values ",
                session.output_per_token() ? "per token" : "per sequence (a pooled output)");
}

}  // namespace gguflow::exec
