// Graphviz pictures of a bound graph (`gguflow graph --dot / --svg`).
#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "ops/error.h"
#include "runtime/graph/writers.h"

namespace gguflow::graph {

namespace {

// Fill colour per op kind (ColorBrewer Pastel1/Set3 shades, readable with black text).
const char* kind_colour(ops::OpKind kind) {
  switch (kind) {
    case ops::OpKind::kEmbed: return "#fbb4ae";
    case ops::OpKind::kNorm: return "#ccebc5";
    case ops::OpKind::kMatmul: return "#b3cde3";
    case ops::OpKind::kPosition: return "#fed9a6";
    case ops::OpKind::kAttention: return "#decbe4";
    case ops::OpKind::kActivation: return "#ffffcc";
    case ops::OpKind::kElementwise: return "#f2f2f2";
    case ops::OpKind::kPool: return "#e5d8bd";
    case ops::OpKind::kProject: return "#fddaec";
  }
  return "white";
}

std::string quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

}  // namespace

std::string graph_dot(const Graph& g, const DotOptions& options) {
  std::ostringstream out;
  out << "digraph " << quoted(g.name.empty() ? "graph" : g.name) << " {\n"
      << "  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n"
      << "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\"];\n";

  // Graph-level endpoints.
  for (int t : g.inputs) {
    const Tensor& x = g.tensors[static_cast<size_t>(t)];
    out << "  " << quoted("in:" + x.name) << " [shape=ellipse, fillcolor=white, label="
        << quoted(x.name + "\n" + x.shape.to_string() + " " + ops::dtype_name(x.dtype)) << "];\n";
  }
  for (int t : g.outputs) {
    const Tensor& x = g.tensors[static_cast<size_t>(t)];
    out << "  " << quoted("out:" + x.name) << " [shape=ellipse, fillcolor=white, label="
        << quoted(x.name + "\n" + x.shape.to_string()) << "];\n";
  }

  // The drawn id of each node: itself, or its group's box when collapsed.
  std::vector<std::string> drawn(g.nodes.size());
  std::map<std::string, std::vector<size_t>> groups;  // group -> nodes, in first-seen order below
  std::vector<std::string> group_order;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    drawn[i] = (options.collapse && !n.group.empty()) ? "group:" + n.group : "node:" + n.name;
    if (!n.group.empty()) {
      if (!groups.count(n.group)) group_order.push_back(n.group);
      groups[n.group].push_back(i);
    }
  }

  auto node_line = [&](size_t i, const char* indent) {
    const Node& n = g.nodes[i];
    std::string label = n.name + "\n" + n.schema->name + " → " +
                        g.tensors[static_cast<size_t>(n.outputs[0])].shape.to_string();
    for (const auto& w : n.weights)
      if (w) label += "\n" + w->tensor + " " + w->info->type_name();
    out << indent << quoted(drawn[i]) << " [fillcolor=" << quoted(kind_colour(n.schema->kind))
        << ", label=" << quoted(label) << "];\n";
  };

  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].group.empty()) node_line(i, "  ");
  int cluster = 0;
  for (const auto& name : group_order) {
    const auto& members = groups[name];
    if (options.collapse) {
      std::map<std::string, int> ops_count;
      for (size_t i : members) ++ops_count[g.nodes[i].schema->name];
      std::string label = name;
      label += "\n";
      label += std::to_string(members.size());
      label += " ops:";
      for (const auto& [op, count] : ops_count) {
        label += ' ';
        label += std::to_string(count);
        label += "×";
        label += op;
      }
      out << "  " << quoted("group:" + name) << " [shape=box3d, style=filled, fillcolor=\"#e8e8f8\", label="
          << quoted(label) << "];\n";
      continue;
    }
    out << "  subgraph cluster_" << cluster++ << " {\n    label=" << quoted(name)
        << "; style=\"rounded,dashed\"; color=\"#999999\"; fontname=\"Helvetica\";\n";
    for (size_t i : members) node_line(i, "    ");
    out << "  }\n";
  }

  // Edges, one per (producer box, consumer box, tensor); edges inside a collapsed box vanish.
  std::map<std::pair<std::string, std::string>, std::string> edges;
  std::vector<std::pair<std::string, std::string>> edge_order;
  auto add_edge = [&](const std::string& from, const std::string& to, const std::string& label) {
    if (from == to) return;
    auto key = std::make_pair(from, to);
    if (!edges.count(key)) edge_order.push_back(key), edges[key] = label;
    else if (edges[key].find(label) == std::string::npos) edges[key] += ", " + label;
  };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (int t : g.nodes[i].inputs) {
      if (t < 0) continue;
      const Tensor& x = g.tensors[static_cast<size_t>(t)];
      const std::string from = x.producer < 0 ? "in:" + x.name : drawn[static_cast<size_t>(x.producer)];
      add_edge(from, drawn[i], x.name);
    }
  }
  for (int t : g.outputs) {
    const Tensor& x = g.tensors[static_cast<size_t>(t)];
    if (x.producer >= 0) add_edge(drawn[static_cast<size_t>(x.producer)], "out:" + x.name, x.name);
  }
  for (const auto& key : edge_order)
    out << "  " << quoted(key.first) << " -> " << quoted(key.second) << " [label=" << quoted(edges[key])
        << "];\n";
  out << "}\n";
  return out.str();
}

void render_svg(const std::string& dot_text, const std::string& svg_path) {
  if (std::system("command -v dot >/dev/null 2>&1") != 0)
    throw error("--svg ", svg_path, ": the Graphviz 'dot' program is not installed (on Debian: "
                "sudo apt-get install graphviz); use --dot to write the DOT text instead");
  const std::string dot_path = svg_path + ".dot.tmp";
  {
    std::ofstream f(dot_path, std::ios::binary);
    if (!f) throw error("--svg ", svg_path, ": cannot write ", dot_path, ": ", std::strerror(errno));
    f << dot_text;
  }
  const std::string command = "dot -Tsvg '" + dot_path + "' -o '" + svg_path + "'";
  const int status = std::system(command.c_str());
  std::filesystem::remove(dot_path);
  if (status != 0)
    throw error("--svg ", svg_path, ": 'dot' failed (exit status ", WIFEXITED(status) ? WEXITSTATUS(status) : -1, ")");
}

}  // namespace gguflow::graph
