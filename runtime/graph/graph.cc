// Small helpers of the Graph IR.
#include "runtime/graph/graph.h"

#include "ops/error.h"

namespace gguflow::graph {

std::string Location::to_string() const {
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string Tensor::id() const { return version == 0 ? name : name + "@" + std::to_string(version); }

const std::optional<WeightBinding>& Node::weight(std::string_view slot) const {
  const int i = schema->weight_index(slot);
  GGUFLOW_CHECK(i >= 0);
  return weights[static_cast<size_t>(i)];
}

int Node::input(std::string_view slot) const {
  const int i = schema->input_index(slot);
  GGUFLOW_CHECK(i >= 0);
  return inputs[static_cast<size_t>(i)];
}

int Graph::find_node(std::string_view name) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == name) return static_cast<int>(i);
  return -1;
}

int Graph::find_state(std::string_view name) const {
  for (size_t i = 0; i < states.size(); ++i)
    if (states[i].name == name) return static_cast<int>(i);
  return -1;
}

int Graph::find_tensor(std::string_view name) const {
  int found = -1;
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == name && (found < 0 || tensors[i].version > tensors[static_cast<size_t>(found)].version))
      found = static_cast<int>(i);
  return found;
}

const Param* Graph::find_param(std::string_view name) const {
  for (const auto& p : params)
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace gguflow::graph
