// Shared by the executor tests: the kernel plugins this CPU can run, reference logits files and
// running a graph over token ids.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "plugins/abi/kernel_abi.h"
#include "runtime/exec/session.h"
#include "runtime/graph/graph.h"

namespace gguflow::test {

struct KernelPlugin {
  std::string name;  // "scalar", "avx2", ...
  const GguflowKernels* table = nullptr;
};

// Every kernel plugin built next to the tests whose instruction set this CPU supports, loaded
// once per process (libraries stay loaded).
const std::vector<KernelPlugin>& usable_kernel_plugins();
std::vector<std::string> usable_kernel_plugin_names();
const GguflowKernels& kernel_plugin(const std::string& name);

// A reference logits file of ../shared/data/reference/logits: the model and token ids from its
// .json, the values from its .bin ([n_tokens][n_vocab] f32).
struct ReferenceLogits {
  std::string model;
  std::vector<int32_t> tokens;
  int64_t n_vocab = 0;
  std::vector<float> logits;
};
ReferenceLogits read_reference_logits(const std::string& stem);

// graphs/decode.yaml bound to data/models/<model_file>.
std::shared_ptr<const graph::Graph> load_decode_graph(const std::string& model_file);
// The shipped generate graph for the model's architecture (as `gguflow run` chooses it), bound
// to data/models/<model_file>; `set` overrides params as --set does.
std::shared_ptr<const graph::Graph> load_default_graph(
    const std::string& model_file, const std::vector<std::pair<std::string, std::string>>& set = {});

// A greedy reference (reference/logits/<stem>.greedy.json): prompt ids and the ids generated.
struct ReferenceGreedy {
  std::vector<int32_t> prompt;
  std::vector<int32_t> generated;
};
ReferenceGreedy read_reference_greedy(const std::string& stem);

// Logits of every position, [tokens.size()][n_vocab], from one prefill.
std::vector<float> run_prompt(std::shared_ptr<const graph::Graph> g, const GguflowKernels& k,
                              const std::vector<int32_t>& tokens, int n_threads,
                              exec::Scheduler scheduler = exec::Scheduler::kFlowGraph,
                              std::optional<ops::KvCacheType> cache_type = std::nullopt);

}  // namespace gguflow::test
