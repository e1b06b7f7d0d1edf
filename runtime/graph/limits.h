// Resource budget for loading a graph: checked before anything is expanded, so a hostile or
// mistaken graph or model (`repeat: 1000000000`, `llama.block_count` = 10^9, `--set
// n_layer=1000000000`, a YAML alias bomb) fails at once with a message naming the limit,
// instead of eating gigabytes. docs/RELIABILITY.md lists them.
#pragma once

#include <cstdint>

namespace gguflow::graph {

struct GraphLimits {
  // Graph items (nodes, and repeat blocks once per iteration) a graph may expand to; also the
  // number of node and repeat entries the YAML may hold after its aliases are resolved.
  uint64_t max_nodes = 1'000'000;
  // The largest count one `repeat:` may have (layers of the biggest real models are ~10^2).
  uint64_t max_repeat = 65'536;
};

inline constexpr const char* kMaxNodesEnv = "GGUFLOW_MAX_GRAPH_NODES";
inline constexpr const char* kMaxRepeatEnv = "GGUFLOW_MAX_REPEAT";

// The defaults above, overridden by $GGUFLOW_MAX_GRAPH_NODES and $GGUFLOW_MAX_REPEAT (positive
// integers). Throws gguflow::Error naming the variable when one is not a positive integer.
GraphLimits graph_limits();

}  // namespace gguflow::graph
