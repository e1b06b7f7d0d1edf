// libFuzzer target: the graph front end (runtime/graph): YAML, `extends` and its edits,
// params and expressions, repeat, binding to a real model, shape inference, tensor coverage,
// the expansion budget; then, for a graph that loads, the lowered YAML (`gguflow lower`),
// which must load again (and, lowered once more, stay the same text), and the DOT writer.
//
// Input: byte 0 chooses the model (byte % 8, so the digits '0'..'7' in seeds; see kModels);
// the rest is the graph's YAML, optionally followed by kBaseSeparator and the YAML of a base
// graph. Both are written into a scratch folder as graph.yaml and base.yaml, beside copies of
// the shipped graphs (so `extends: base.yaml` and `extends: decode.yaml` both resolve), and
// graph.yaml is loaded with load_graph_text. gguflow::Error is the clean-error path.
//
// Budget: GGUFLOW_MAX_GRAPH_NODES defaults to 20000 here (the shipped graphs expand to a few
// hundred items on these models; the default of 10^6 lets one input take seconds), unless the
// environment sets it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "ops/error.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/graph/limits.h"
#include "runtime/graph/load.h"
#include "runtime/graph/writers.h"

namespace {

namespace fs = std::filesystem;
using gguflow::Error;

constexpr std::string_view kBaseSeparator = "\n#%base.yaml\n";

// One model per shipped graph family (tiny files, mapped once).
constexpr const char* kModels[8] = {
    "models/stories260K.gguf",                // 0 llama: decode.yaml, embed.yaml
    "models/synth-qwen2-tiny-Q4_K_M.gguf",    // 1 qwen2 (Q/K/V biases): decode.yaml
    "models/synth-gemma2-tiny-Q4_K_M.gguf",   // 2 gemma2.yaml
    "models/synth-gemma3-tiny-Q4_K_M.gguf",   // 3 gemma3.yaml
    "models/synth-phi3-tiny-Q4_K_M.gguf",     // 4 phi3.yaml
    "models/synth-qwen3-tiny-Q4_K_M.gguf",    // 5 qwen3.yaml
    "models/synth-bert-tiny-mean-Q8_0.gguf",  // 6 bert.yaml
    "models/synth-nomic-bert-tiny-f32.gguf",  // 7 nomic-bert.yaml
};

struct State {
  std::vector<std::shared_ptr<const gguflow::GgufFile>> models;
  fs::path dir;
  fs::path graph, base;
};
State* state = nullptr;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ::setenv(gguflow::graph::kMaxNodesEnv, "20000", /*overwrite=*/0);
  state = new State();
  for (const char* relative : kModels) {
    const fs::path path = gguflow::fuzz::data_dir() / relative;
    try {
      state->models.push_back(gguflow::GgufFile::open(path.string()));
    } catch (const Error& e) {
      gguflow::fuzz::fail_setup(std::string(e.what()) + " (set GGUFLOW_TEST_DATA to the shared/data folder)");
    }
  }
  state->dir = gguflow::fuzz::scratch_dir();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(gguflow::fuzz::source_dir() / "graphs", ec))
    if (entry.path().extension() == ".yaml")
      fs::copy_file(entry.path(), state->dir / entry.path().filename(), ec);
  if (ec) gguflow::fuzz::fail_setup("cannot copy the shipped graphs: " + ec.message());
  state->graph = state->dir / "graph.yaml";
  state->base = state->dir / "base.yaml";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const auto& model = state->models[data[0] % state->models.size()];
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const size_t split = rest.find(kBaseSeparator);
  const std::string text(rest.substr(0, split));
  const std::string_view base =
      split == std::string_view::npos ? std::string_view() : rest.substr(split + kBaseSeparator.size());
  // Both files are rewritten for every input, so nothing of an earlier input is read.
  gguflow::fuzz::write_file(state->graph, text);
  gguflow::fuzz::write_file(state->base, base);

  gguflow::graph::Graph graph;
  try {
    graph = gguflow::graph::load_graph_text(text, state->graph.string(), model);
  } catch (const Error& e) {
    gguflow::fuzz::note_clean_error(e);
    return 0;
  }
  // A graph that loaded: its lowered form is YAML that load_graph accepts (writers.h). The
  // first lowering keeps where each param came from (comments, the source file in the header),
  // so it is the lowering of the lowered graph that must be a fixed point. An error here is a
  // finding, not a clean error.
  const auto lower_again = [&](const std::string& lowered) {
    try {
      return gguflow::graph::lowered_yaml(
          gguflow::graph::load_graph_text(lowered, (state->dir / "lowered.yaml").string(), model));
    } catch (const Error& e) {
      gguflow::fuzz::finding(std::string("the lowered graph does not load: ") + e.what() + "\n" + lowered);
    }
  };
  const std::string once = lower_again(gguflow::graph::lowered_yaml(graph));
  const std::string twice = lower_again(once);
  GGUFLOW_FUZZ_EXPECT(twice == once, "lowering a lowered graph changed it:\n" + once + "\n---\n" + twice);
  (void)gguflow::graph::graph_dot(graph);
  (void)gguflow::graph::graph_dot(graph, {.collapse = true});
  return 0;
}
