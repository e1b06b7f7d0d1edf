#include "tests/exec/exec_test_support.h"

#include <fstream>
#include <regex>
#include <sstream>

#include "runtime/gguf/gguf_file.h"
#include "runtime/graph/graph_choice.h"
#include "runtime/graph/load.h"
#include "runtime/plugins/kernel_plugins.h"
#include "tests/support/test_data.h"

namespace gguflow::test {

const std::vector<KernelPlugin>& usable_kernel_plugins() {
  static const std::vector<KernelPlugin> plugins = [] {
    std::vector<KernelPlugin> found;
    plugins::SelectOptions options;
    options.search_dirs = {binary_dir()};
    // The scan reads each file's target without loading it; unusable ones are never loaded.
    for (const auto& candidate : plugins::scan_plugins(options))
      if (candidate.usable) found.push_back({candidate.name, plugins::load_plugin(candidate).table});
    return found;
  }();
  return plugins;
}

std::vector<std::string> usable_kernel_plugin_names() {
  std::vector<std::string> names;
  for (const auto& p : usable_kernel_plugins()) names.push_back(p.name);
  return names;
}

const GguflowKernels& kernel_plugin(const std::string& name) {
  for (const auto& p : usable_kernel_plugins())
    if (p.name == name) return *p.table;
  throw std::runtime_error("kernel plugin not found: " + name);
}

namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

ReferenceLogits read_reference_logits(const std::string& stem) {
  ReferenceLogits ref;
  const std::string json = read_text(data_path("reference/logits/" + stem + ".json"));
  std::smatch m;
  if (std::regex_search(json, m, std::regex("\"model\"\\s*:\\s*\"([^\"]+)\""))) ref.model = m[1];
  if (std::regex_search(json, m, std::regex("\"n_vocab\"\\s*:\\s*(\\d+)")))
    ref.n_vocab = std::stoll(m[1]);
  if (std::regex_search(json, m, std::regex("\"tokens\"\\s*:\\s*\\[([^\\]]*)\\]"))) {
    std::stringstream ids(std::regex_replace(std::string(m[1]), std::regex(","), " "));
    for (int32_t id; ids >> id;) ref.tokens.push_back(id);
  }
  std::ifstream bin(data_path("reference/logits/" + stem + ".bin"), std::ios::binary);
  ref.logits.resize(ref.tokens.size() * ref.n_vocab);
  bin.read(reinterpret_cast<char*>(ref.logits.data()),
           static_cast<std::streamsize>(ref.logits.size() * sizeof(float)));
  if (!bin) ref.logits.clear();
  return ref;
}

std::shared_ptr<const graph::Graph> load_decode_graph(const std::string& model_file) {
  auto model = GgufFile::open(data_path("models/" + model_file).string());
  return std::make_shared<const graph::Graph>(
      graph::load_graph((source_dir() / "graphs/decode.yaml").string(), model));
}

std::shared_ptr<const graph::Graph> load_default_graph(
    const std::string& model_file, const std::vector<std::pair<std::string, std::string>>& set) {
  auto model = GgufFile::open(data_path("models/" + model_file).string());
  graph::LoadOptions options;
  options.set = set;
  return std::make_shared<const graph::Graph>(graph::load_graph(
      graph::default_graph_path(*model, graph::Job::kGenerate), model, options));
}

namespace {

std::vector<int32_t> int_list(const std::string& json, const std::string& key) {
  std::smatch m;
  std::vector<int32_t> out;
  if (!std::regex_search(json, m, std::regex("\"" + key + "\"\\s*:\\s*\\[([^\\]]*)\\]"))) return out;
  std::stringstream ids(std::regex_replace(std::string(m[1]), std::regex(","), " "));
  for (int32_t id; ids >> id;) out.push_back(id);
  return out;
}

}  // namespace

ReferenceGreedy read_reference_greedy(const std::string& stem) {
  const std::string json = read_text(data_path("reference/logits/" + stem + ".greedy.json"));
  return {int_list(json, "prompt_ids"), int_list(json, "generated_ids")};
}

std::vector<float> run_prompt(std::shared_ptr<const graph::Graph> g, const GguflowKernels& k,
                              const std::vector<int32_t>& tokens, int n_threads,
                              exec::Scheduler scheduler, std::optional<ops::KvCacheType> cache_type) {
  exec::SessionOptions options;
  options.n_threads = n_threads;
  options.scheduler = scheduler;
  options.cache_type_k = options.cache_type_v = cache_type;  // both, as llama.cpp's -ctk/-ctv f16
  exec::Session session(std::move(g), k, options);
  std::vector<float> all;
  session.prefill(tokens, &all);
  return all;
}

}  // namespace gguflow::test
