// Entry points of the graph front end and the search for shipped graph files.
#include "runtime/graph/load.h"

#include "runtime/gguf/model_hparams.h"

#include <unistd.h>

#include <filesystem>

#include "runtime/graph/expand.h"
#include "runtime/graph/tensor_coverage.h"

namespace gguflow::graph {

namespace fs = std::filesystem;

namespace {

// Binds, records what the graph declares it is for, and refuses a model it does not fully read.
Graph bind(const GraphSpec& spec, std::shared_ptr<const GgufFile> model, const LoadOptions& options) {
  if (model) check_model_metadata(*model);
  const std::string& file = spec.files.empty() ? spec.name : spec.files.front();
  if (options.job && !spec.job.empty() && spec.job != job_name(*options.job))
    throw error(file, ": graph '", spec.name, "' has job: ", spec.job, ": expected a graph with job: ", job_name(*options.job),
                " or none (", spec.job == "embed" ? "an embedding graph runs with gguflow embed"
                                                  : "a generation graph runs with gguflow run", ")");
  Graph g = build_graph(spec, std::move(model), options);
  g.architectures = spec.architectures;
  g.job = spec.job;
  g.unused = spec.unused;
  check_reads_model(g);
  check_implements_architecture(g);  // after the tensors, which name what the graph leaves unread
  return g;
}

// Where shipped graphs may be, in order: next to the executable (build tree, then install
// tree), then the source tree this was built from.
std::vector<fs::path> shipped_places() {
  std::vector<fs::path> places;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    places.push_back(exe.parent_path() / "../../graphs");          // build/bin/gguflow in the source tree
    places.push_back(exe.parent_path() / "../share/gguflow/graphs");  // installed
  }
#ifdef GGUFLOW_SOURCE_DIR
  places.push_back(fs::path(GGUFLOW_SOURCE_DIR) / "graphs");
#endif
  return places;
}

}  // namespace

Graph load_graph(const std::string& path, std::shared_ptr<const GgufFile> model, const LoadOptions& options) {
  return bind(load_spec(path), std::move(model), options);
}

Graph load_graph_text(const std::string& text, const std::string& file, std::shared_ptr<const GgufFile> model,
                      const LoadOptions& options) {
  return bind(load_spec_text(text, file), std::move(model), options);
}

std::vector<std::pair<std::string, std::string>> parse_set_options(const std::vector<std::string>& words) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& w : words) {
    const size_t eq = w.find('=');
    if (eq == std::string::npos || eq == 0)
      throw error("--set ", w, ": expected name=value, found no '='");
    out.emplace_back(w.substr(0, eq), w.substr(eq + 1));
  }
  return out;
}

std::string find_shipped_graph(const std::string& file_name) {
  std::error_code ec;
  std::string looked;
  for (const auto& dir : shipped_places()) {
    const fs::path candidate = (dir / file_name).lexically_normal();
    if (fs::is_regular_file(candidate, ec)) return candidate.string();
    looked += (looked.empty() ? "" : ", ") + candidate.string();
  }
  throw error("shipped graph '", file_name, "' not found: looked at ", looked, " (pass --graph FILE)");
}

std::string shipped_graphs_dir() {
  std::error_code ec;
  std::string looked;
  for (const auto& dir : shipped_places()) {
    const fs::path candidate = dir.lexically_normal();
    if (fs::is_directory(candidate, ec)) return candidate.string();
    looked += (looked.empty() ? "" : ", ") + candidate.string();
  }
  throw error("shipped graphs folder not found: looked at ", looked, " (pass --graph FILE)");
}

}  // namespace gguflow::graph
