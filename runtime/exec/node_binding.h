// Binds one node of an expanded graph to its op: resolves weights into views of the GGUF
// mapping (checking the kernel table implements their types), reads attributes, declares the
// scratch buffers the op needs, and returns the closure that runs it on arena buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "ops/attention.h"
#include "plugins/abi/kernel_abi.h"
#include "runtime/exec/packed_weights.h"
#include "runtime/graph/graph.h"

namespace gguflow::exec {

// Where a node's buffers are in this step: the arena base plus offsets from the plan.
struct NodeIo {
  std::vector<size_t> inputs;   // per schema input slot; kAbsent for an absent optional input
  std::vector<size_t> outputs;  // per schema output
  std::vector<size_t> scratch;  // per BoundNode::scratch_bytes entry
  static constexpr size_t kAbsent = SIZE_MAX;
};

struct StepView {
  std::byte* arena = nullptr;
  int64_t n_tokens = 0;  // T of this step
  // Only the last token's row of the graph's output is wanted (a prompt whose caller keeps
  // only the last logits): the node producing a per-token output computes that one row and
  // writes it as row 0. Every other node still runs on all T rows (the KV cache needs them).
  bool last_output_only = false;
};

using NodeFn = std::function<void(const StepView& step, const NodeIo& io)>;

struct BoundNode {
  std::vector<size_t> scratch_bytes;  // sized for the largest step (max_tokens)
  NodeFn run;
  // It produces the graph output and honours StepView::last_output_only.
  bool writes_last_output_only = false;
};

// Shared resources and limits of one session.
struct BindContext {
  const GguflowKernels* kernels = nullptr;
  int64_t max_tokens = 0;  // largest T of a step
  int64_t n_ctx = 0;       // KV cache slots
  int max_threads = 1;     // arena concurrency (per-thread scratch)
  std::vector<ops::KvCacheView>* caches = nullptr;   // per graph state (kv_cache), allocated
  std::deque<std::vector<float>>* widened = nullptr;  // owner of small weights widened to f32
  PackedWeights* packed = nullptr;  // packed copies of matmul weights (null: multiply row-major)
};

// Throws gguflow::Error naming the node, its YAML location and the weight when a weight's type
// has no kernel or a small weight cannot be decoded.
BoundNode bind_node(const graph::Graph& g, int node_index, const BindContext& ctx);

}  // namespace gguflow::exec
