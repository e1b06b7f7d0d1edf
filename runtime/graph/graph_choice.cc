// Choosing the default graph by architecture and job from the shipped graphs' declarations.
#include "runtime/graph/graph_choice.h"

#include <algorithm>
#include <filesystem>

#include "ops/error.h"
#include "runtime/graph/load.h"
#include "runtime/graph/spec.h"

namespace gguflow::graph {

namespace fs = std::filesystem;

namespace {

std::string file_name(const std::string& path) { return fs::path(path).filename().string(); }

bool claims(const GraphClaim& c, const std::string& architecture, std::string_view job) {
  return c.job == job && std::find(c.architectures.begin(), c.architectures.end(), architecture) !=
                             c.architectures.end();
}

// "decode.yaml implements llama, qwen2 (generate); embed.yaml implements llama (embed); ...":
// the defaults first, then the opt-in variants.
std::string describe(const std::vector<GraphClaim>& all) {
  std::vector<const GraphClaim*> order;
  for (const auto& c : all)
    if (!c.job.empty()) order.push_back(&c);
  for (const auto& c : all)
    if (c.job.empty()) order.push_back(&c);
  std::string s;
  for (const GraphClaim* claim : order) {
    const GraphClaim& c = *claim;
    s += (s.empty() ? "" : "; ") + file_name(c.path) + " implements ";
    std::string archs;
    for (const auto& a : c.architectures) archs += (archs.empty() ? "" : ", ") + a;
    s += archs.empty() ? "no architecture" : archs;
    if (!c.job.empty()) s += " (" + c.job + ")";
  }
  return s.empty() ? "there are no graphs" : s;
}

}  // namespace

std::string_view job_name(Job job) { return job == Job::kEmbed ? "embed" : "generate"; }

std::vector<GraphClaim> read_graph_claims(const std::string& dir) {
  std::vector<std::string> paths;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  std::vector<GraphClaim> out;
  for (const auto& p : paths) {
    const GraphSpec spec = load_spec(p);
    out.push_back({p, spec.architectures, spec.job});
  }
  return out;
}

void check_unique_claims(const std::vector<GraphClaim>& claims_in) {
  for (size_t i = 0; i < claims_in.size(); ++i) {
    if (claims_in[i].job.empty()) continue;
    for (size_t j = i + 1; j < claims_in.size(); ++j)
      for (const auto& a : claims_in[i].architectures)
        if (claims(claims_in[j], a, claims_in[i].job))
          throw error("graphs ", claims_in[i].path, " and ", claims_in[j].path, " both declare architecture '", a,
                      "' with job: ", claims_in[i].job, ": expected one default graph per architecture and job");
  }
}

std::string choose_graph(const std::vector<GraphClaim>& all, const std::string& architecture, Job job,
                         const std::string& model_name) {
  for (const auto& c : all)
    if (claims(c, architecture, job_name(job))) return c.path;
  if (architecture.empty())
    throw error("model ", model_name, " has no general.architecture, so no shipped graph is its default: ",
                describe(all), " (pass --graph FILE)");
  const bool known = std::any_of(all.begin(), all.end(), [&](const GraphClaim& c) {
    return std::find(c.architectures.begin(), c.architectures.end(), architecture) != c.architectures.end();
  });
  if (!known)
    throw error("model ", model_name, " has architecture '", architecture,
                "', which no shipped graph implements: ", describe(all));
  throw error("model ", model_name, " has architecture '", architecture, "', for which no shipped graph has job: ",
              job_name(job), ": ", describe(all), " (pass --graph FILE)");
}

std::string default_graph_path(const GgufFile& model, Job job) {
  const std::vector<GraphClaim> all = read_graph_claims(shipped_graphs_dir());
  check_unique_claims(all);
  return choose_graph(all, model.architecture(), job, file_name(model.path()));
}

}  // namespace gguflow::graph
