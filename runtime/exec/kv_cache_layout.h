// How many floats one cached token takes in a kv_cache state, decided by the node that writes
// the state: `attention` caches whole rows (n_head_kv * head_dim for K and for V), `kv_project`
// caches coordinates in its bases (r_K and r_V, the bases' ne1). The session allocates caches
// with these widths, so its kv_cache_bytes() is what a graph really holds per token.
#pragma once

#include <cstdint>

#include "runtime/graph/graph.h"

namespace gguflow::exec {

struct KvRowWidths {
  int64_t k = 0;  // floats per token in the K block
  int64_t v = 0;  // floats per token in the V block
};

// Widths of state `state` of `g` (index into g.states). A state no node writes keeps the
// declared n_head_kv * head_dim.
KvRowWidths kv_row_widths(const graph::Graph& g, int state);

}  // namespace gguflow::exec
