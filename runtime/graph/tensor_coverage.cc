// The unread-tensor check: every tensor of the model is read by a node or listed in `unused:`.
#include "runtime/graph/tensor_coverage.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "ops/error.h"

namespace gguflow::graph {

bool matches_pattern(std::string_view pattern, std::string_view name) {
  // Greedy glob with backtracking to the last '*': linear for the short names of GGUF tensors.
  size_t p = 0, n = 0, star = std::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p, ++n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::vector<std::string> unread_tensors(const Graph& g) {
  std::set<std::string, std::less<>> read;
  for (const auto& node : g.nodes)
    for (const auto& w : node.weights)
      if (w && w->file == g.model_file.get()) read.insert(w->tensor);
  std::vector<std::string> unread;
  for (const auto& t : g.model_file->tensors()) {
    if (read.count(t.name)) continue;
    bool listed = false;
    for (const auto& pattern : g.unused) listed = listed || matches_pattern(pattern, t.name);
    if (!listed) unread.push_back(t.name);
  }
  return unread;
}

namespace {

std::string joined(const std::vector<std::string>& words, size_t at_most) {
  std::string s;
  for (size_t i = 0; i < words.size() && i < at_most; ++i) s += (i ? ", " : "") + words[i];
  if (words.size() > at_most) s += " and " + std::to_string(words.size() - at_most) + " more";
  return s;
}

}  // namespace

void check_reads_forward_metadata(const GgufFile& model, const std::set<std::string>& metadata_read,
                                  const std::string& graph_file) {
  const std::string arch = model.architecture();
  if (arch.empty()) return;
  const auto declared = [&](const std::string& suffix, auto neutral) -> std::string {
    const std::string key = arch + "." + suffix;
    const GgufValue* v = model.find(key);
    if (!v || metadata_read.count(key) || neutral(*v, key)) return "";
    return key + " = " + v->to_string(4);
  };
  const auto none = [](const GgufValue& v, const std::string& key) {
    return v.type == GgufValueType::kString && (v.as_string(key).empty() || v.as_string(key) == "none");
  };
  // llama.cpp scales nothing when the type says none, whatever the factor (absent, the type is
  // linear).
  if (const GgufValue* type = model.find(arch + ".rope.scaling.type"); type && none(*type, arch + ".rope.scaling.type"))
    return;
  const auto one_or_zero = [](const GgufValue& v, const std::string& key) {
    return v.is_number() && (v.as_double(key) == 0.0 || v.as_double(key) == 1.0);
  };
  for (const std::string& found : {declared("rope.scaling.type", none), declared("rope.scaling.factor", one_or_zero),
                                   declared("rope.scale_linear", one_or_zero)})
    if (!found.empty())
      throw error(std::filesystem::path(model.path()).filename().string(), ": ", found, ": the model declares rope "
                  "scaling, which ", graph_file, " does not compute (its params do not read the key): expected a "
                  "graph that implements it; a run without it would give other numbers than the model's");
}

void check_implements_architecture(const Graph& g) {
  if (!g.model_file || g.architectures.empty()) return;
  const std::string arch = g.model_file->architecture();
  if (arch.empty() || std::find(g.architectures.begin(), g.architectures.end(), arch) != g.architectures.end())
    return;
  throw error(g.files.empty() ? g.name : g.files.front(), ": graph '", g.name, "' implements ",
              joined(g.architectures, g.architectures.size()), "; the model ",
              std::filesystem::path(g.model_file->path()).filename().string(), " is ", arch,
              ": expected a graph whose architectures: name it (without --graph, the shipped one for ", arch,
              " if there is one)");
}

void check_reads_model(const Graph& g) {
  const std::vector<std::string> unread = unread_tensors(g);
  if (unread.empty()) return;
  const std::string graph_file = g.files.empty() ? g.name : g.files.front();
  const std::string implements =
      g.architectures.empty() ? "which declares no architectures" : "which implements " + joined(g.architectures, g.architectures.size());
  const std::string arch = g.model_file->architecture();
  const std::string model = std::filesystem::path(g.model_file->path()).filename().string();
  throw error(joined(unread, 10), unread.size() == 1 ? " is" : " are", " not read by ", graph_file, ", ",
              implements, "; this model is ", arch.empty() ? "of no general.architecture" : arch, " (", model,
              "): expected a graph that reads every tensor of the model (one that skips some on purpose "
              "lists them under 'unused:')");
}

}  // namespace gguflow::graph
