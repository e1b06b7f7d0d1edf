// Text forms of a bound Graph: the lowered YAML (`gguflow lower`) and Graphviz DOT
// (`gguflow graph --dot`).
#pragma once

#include <string>

#include "runtime/graph/graph.h"

namespace gguflow::graph {

// The fully expanded graph as YAML that `load_graph` accepts: params as literals, every node
// with its name, op, inputs by slot, weights as {tensor, type, dims}, attributes, output and
// `shape:` (checked again on load). Byte-for-byte deterministic (golden tests compare it).
std::string lowered_yaml(const Graph& graph);

struct DotOptions {
  // Draw each repeat instance (node group, e.g. "blk.3") as one box instead of its nodes.
  bool collapse = false;
};
// Nodes labelled with name, op and output shape, filled by op kind; edges labelled with the
// tensor; repeat instances as clusters.
std::string graph_dot(const Graph& graph, const DotOptions& options = {});

// Renders DOT text to an SVG file through the `dot` program (Graphviz), written as OutputFile
// writes (a path naming an input is refused). Throws naming the missing program (and the Debian
// package) when Graphviz is not installed, or dot's exit status and first line of complaint.
void render_svg(const std::string& dot_text, const std::string& svg_path);

}  // namespace gguflow::graph
