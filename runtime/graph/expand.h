// Expansion of a GraphSpec for one model: repeat blocks unrolled, `{i}` substituted, attributes
// typed, weight references and tensor names collected with their YAML locations. Internal to
// runtime/graph; `build.cc` turns the result into a `Graph`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runtime/graph/load.h"
#include "runtime/graph/params.h"
#include "runtime/graph/spec.h"

namespace gguflow::graph {

struct NameRef {
  std::string name;  // "" for an absent optional input
  Location where;
};

// A weight slot as written: "a ?? b?" alternatives, or (in lowered files) {tensor, type, dims}.
struct WeightRef {
  std::string text;   // "" when the node leaves an optional slot empty
  Location where;
  std::optional<std::string> expect_type;           // lowered annotation: "Q4_K"
  std::optional<std::vector<uint64_t>> expect_dims;  // lowered annotation
};

struct RawNode {
  const ops::OpSchema* schema = nullptr;
  std::string name;
  Location where;
  std::string group;
  std::vector<NameRef> inputs;    // per schema input slot
  std::vector<NameRef> outputs;   // per schema output
  std::vector<WeightRef> weights;  // per schema weight slot
  ops::Attrs attrs;
  std::vector<Location> attr_where;  // per attrs.values entry
  std::optional<Shape> expect_shape;  // lowered annotation `shape:`
  Location shape_where;
};

// Unrolls `items` with the resolver's params. Throws at the first error in a node.
std::vector<RawNode> expand_nodes(const GraphSpec& spec, ParamResolver& params);
std::vector<State> expand_states(const GraphSpec& spec, ParamResolver& params);
// A shape written in YAML: a list of ints, `T`, `$param` or `${expr}`.
Shape parse_shape(const Sourced& list, ParamResolver& params);

// The whole binding (build.cc): expand, resolve names, bind weights, infer shapes, order, prune.
Graph build_graph(const GraphSpec& spec, std::shared_ptr<const GgufFile> model, const LoadOptions& options);

}  // namespace gguflow::graph
