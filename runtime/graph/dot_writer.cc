// Graphviz pictures of a bound graph (`gguflow graph --dot / --svg`).
#include <pthread.h>
#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <future>
#include <map>
#include <sstream>

#include <boost/asio/io_context.hpp>
#include <boost/process.hpp>

#include "ops/error.h"
#include "runtime/core/output_file.h"
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

namespace {

// SIGPIPE blocked on the calling thread for the object's life; a SIGPIPE raised meanwhile is
// consumed before the old mask comes back (unblocked, it would still end the process).
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeBlocked() {
    const timespec none{0, 0};
    while (sigtimedwait(&pipe_, nullptr, &none) == SIGPIPE) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  sigset_t pipe_, old_;
};

}  // namespace

void render_svg(const std::string& dot_text, const std::string& svg_path) {
  namespace bp = boost::process;
  const boost::filesystem::path dot = bp::search_path("dot");
  if (dot.empty())
    throw error("--svg ", svg_path, ": the Graphviz 'dot' program is not installed (on Debian: "
                "sudo apt-get install graphviz); use --dot to write the DOT text instead");
  // The output is opened first: a path that names an input or cannot be written is refused
  // before dot runs, and the SVG goes in as `>` would put it (OutputFile). dot reads the text on
  // stdin and writes the SVG on stdout, so no path passes through dot or a shell.
  OutputFile out(svg_path);
  boost::asio::io_context io;
  std::future<std::string> svg, messages;
  int status = -1;
  {
    // A dot that exits before reading all the text (a failed start) makes the write raise
    // SIGPIPE, which killed the process with no word (a 24-layer graph is ~80 KB of DOT, more than
    // a pipe holds): blocked on this thread, the write fails instead, and the pending signal is
    // taken before the mask is restored.
    SigpipeBlocked blocked;
    try {
      bp::child child(dot, "-Tsvg", bp::std_in < boost::asio::buffer(dot_text), bp::std_out > svg,
                      bp::std_err > messages, io);
      io.run();
      child.wait();
      status = child.exit_code();
    } catch (const std::system_error& e) {  // bp::process_error, or asio's for the pipe
      throw error("--svg ", svg_path, ": cannot run ", dot.string(), ": ", e.what());
    }
  }
  const std::string complaints = messages.get();
  if (status != 0) {
    const std::string why = complaints.substr(0, complaints.find('\n'));
    throw error("--svg ", svg_path, ": 'dot' failed (exit status ", status, ")", why.empty() ? "" : ": ", why);
  }
  std::fputs(complaints.c_str(), stderr);  // dot's warnings, as it would print them
  const std::string bytes = svg.get();
  if (std::fwrite(bytes.data(), 1, bytes.size(), out.stream()) != bytes.size())
    throw error(out.name(), ": write failed: ", std::strerror(errno));
  out.commit();
}

}  // namespace gguflow::graph
