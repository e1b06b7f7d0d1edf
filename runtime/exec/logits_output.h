// Whether a session's output is logits to choose tokens from: what `run` (text and --tokens)
// and `serve` check before they sample or take an argmax. An embedding graph's pooled vector, or
// its per-token hidden states, would otherwise be read as scores over token ids.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/exec/session.h"
#include "runtime/graph/graph.h"

namespace gguflow::exec {

// Throws gguflow::Error naming `graph_path` unless every step's output rows are logits over the
// model's vocabulary: one row per token, as wide as the graph's n_vocab param, else
// `fallback_vocab` (a tokenizer's size; <= 0: the rows of the table token ids index).
void check_logits_output(const std::string& graph_path, const graph::Graph& graph, const Session& session,
                         int64_t fallback_vocab);

}  // namespace gguflow::exec
