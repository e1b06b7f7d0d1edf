#include "runtime/exec/kv_cache_layout.h"

#include "runtime/core/error.h"

namespace gguflow::exec {

KvRowWidths kv_row_widths(const graph::Graph& g, int state) {
  const graph::State& s = g.states[static_cast<size_t>(state)];
  const int64_t full = s.n_head_kv * s.head_dim;
  for (const graph::Node& node : g.nodes) {
    if (node.state != state || node.op != ops::OpId::kKvProject) continue;
    const auto& k_basis = node.weight("k_basis");
    const auto& v_basis = node.weight("v_basis");
    GGUFLOW_CHECK(k_basis && v_basis && k_basis->dims.size() == 2 && v_basis->dims.size() == 2);
    return {static_cast<int64_t>(k_basis->dims[1]), static_cast<int64_t>(v_basis->dims[1])};
  }
  return {full, full};
}

}  // namespace gguflow::exec
