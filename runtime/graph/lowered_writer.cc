// `gguflow lower` output: the bound graph as plain, reloadable YAML.
#include <cctype>
#include <filesystem>
#include <sstream>

#include "runtime/graph/expression.h"
#include "runtime/graph/writers.h"

namespace gguflow::graph {

namespace {

// A string as a YAML scalar that reads back as the same string (never as a number or bool).
std::string yaml_string(const std::string& s) {
  bool plain = !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_');
  for (char c : s)
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-');
  static const char* kReserved[] = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "T",
                                    "True", "False", "Null", "Yes", "No", "On", "Off"};
  for (const char* r : kReserved) plain = plain && s != r;
  if (plain) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

std::string value_text(const AttrValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return yaml_string(*s);
  return ops::attr_to_string(v);
}

std::string dims_text(const std::vector<uint64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// `key: [a, b]` on one line, nothing for an empty list.
void write_list(std::ostream& out, const char* key, const std::vector<std::string>& words) {
  if (words.empty()) return;
  out << key << ": [";
  for (size_t i = 0; i < words.size(); ++i) out << (i ? ", " : "") << yaml_string(words[i]);
  out << "]\n";
}

std::string file_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

}  // namespace

std::string lowered_yaml(const Graph& g) {
  std::ostringstream out;
  out << "# Lowered by `gguflow lower` from " << (g.files.empty() ? "?" : file_name(g.files[0]));
  for (size_t i = 1; i < g.files.size(); ++i) out << " (extends " << file_name(g.files[i]) << ")";
  out << " for " << file_name(g.model_file->path()) << ".\n"
      << "# Fully expanded: params resolved, repeats unrolled, every weight with its GGML type and\n"
      << "# dims, every activation with its shape (ne0 first; T = tokens in a step). This file loads\n"
      << "# like any graph and is checked against the model again (types, dims and shapes).\n";
  out << "graph: " << yaml_string(g.name.empty() ? std::string("graph") : g.name) << "\n";
  // Kept so the lowered file is refused for the same families and commands as its template
  // (graph/load.h), and passes the same unread-tensor check.
  write_list(out, "architectures", g.architectures);
  if (!g.job.empty()) out << "job: " << g.job << "\n";
  write_list(out, "unused", g.unused);

  out << "params:\n";
  for (const auto& p : g.params) {
    out << "  " << p.name << ": ";
    if (std::holds_alternative<std::string>(p.value)) out << "{value: " << value_text(p.value) << "}";
    else out << ops::attr_to_string(p.value);
    if (!p.source.empty()) out << "  # " << p.source;
    out << "\n";
  }

  out << "inputs:\n";
  for (int t : g.inputs) {
    const Tensor& tensor = g.tensors[static_cast<size_t>(t)];
    out << "  " << yaml_string(tensor.name) << ": {dtype: " << ops::dtype_name(tensor.dtype)
        << ", shape: " << tensor.shape.to_string() << "}\n";
  }
  out << "outputs: [";
  for (size_t i = 0; i < g.outputs.size(); ++i)
    out << (i ? ", " : "") << yaml_string(g.tensors[static_cast<size_t>(g.outputs[i])].name);
  out << "]\n";

  if (!g.states.empty()) {
    out << "state:\n";
    for (const auto& s : g.states) {
      out << "  - {name: " << yaml_string(s.name) << ", kind: " << s.kind;
      for (const auto& [k, v] : s.attrs.values) out << ", " << k << ": " << value_text(v);
      out << "}\n";
    }
  }

  out << "nodes:\n";
  for (const auto& n : g.nodes) {
    const ops::OpSchema& op = *n.schema;
    out << "  - name: " << yaml_string(n.name) << "\n";
    out << "    op: " << op.name << "\n";
    if (!n.group.empty()) out << "    group: " << yaml_string(n.group) << "\n";
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if (n.inputs[i] < 0) continue;
      out << "    " << op.inputs[i].name << ": " << yaml_string(g.tensors[static_cast<size_t>(n.inputs[i])].name)
          << "\n";
    }
    for (size_t w = 0; w < op.weights.size(); ++w) {
      if (!n.weights[w]) continue;
      const WeightBinding& b = *n.weights[w];
      out << "    " << op.weights[w].name << ": {tensor: " << yaml_string(b.tensor)
          << ", type: " << b.info->type_name() << ", dims: " << dims_text(b.dims) << "}\n";
    }
    for (const auto& [k, v] : n.attrs.values) out << "    " << k << ": " << value_text(v) << "\n";
    const Tensor& result = g.tensors[static_cast<size_t>(n.outputs[0])];
    out << "    out: " << yaml_string(result.name) << "\n";
    out << "    shape: " << result.shape.to_string() << "\n";
  }
  return out.str();
}

}  // namespace gguflow::graph
