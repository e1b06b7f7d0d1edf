#include "runtime/bench/roofline.h"

#include <map>
#include <string>

namespace gguflow::bench {

uint64_t weight_bytes_per_token(const graph::Graph& g) {
  // tensor name -> bytes read per token (a full tensor wins over an embedding row).
  std::map<std::string, uint64_t> read;
  for (const graph::Node& node : g.nodes) {
    for (size_t w = 0; w < node.weights.size(); ++w) {
      const auto& binding = node.weights[w];
      if (!binding || !binding->info) continue;
      // A table indexed by the token ids (embed) is read one row per token.
      bool looked_up = false;
      for (const ops::InputSpec& in : node.schema->inputs)
        looked_up |= in.indexes_weight == static_cast<int>(w);
      const uint64_t bytes = looked_up ? binding->info->row_bytes() : binding->info->n_bytes();
      uint64_t& slot = read[binding->tensor];
      if (bytes > slot) slot = bytes;
    }
  }
  uint64_t total = 0;
  for (const auto& [name, bytes] : read) total += bytes;
  return total;
}

double roofline_fraction(double tokens_per_s, uint64_t bytes_per_token,
                         double bandwidth_bytes_per_s) {
  if (!(bandwidth_bytes_per_s > 0)) return 0;
  return tokens_per_s * static_cast<double>(bytes_per_token) / bandwidth_bytes_per_s;
}

}  // namespace gguflow::bench
