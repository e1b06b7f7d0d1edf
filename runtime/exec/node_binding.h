// Binds one node of an expanded graph for a session: implements ops::Binder over the graph
// node (typed attributes, shapes, weight views into the GGUF mapping, the node's KV cache) and
// calls the op's own bind function (OpSchema::bind), which returns the closure that runs it on
// arena buffers.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "ops/attention.h"
#include "ops/op_binder.h"
#include "plugins/abi/kernel_abi.h"
#include "runtime/exec/packed_weights.h"
#include "runtime/graph/graph.h"

namespace gguflow::exec {

using ops::NodeIo;
using ops::StepView;
using BoundNode = ops::BoundOp;

// Shared resources and limits of one session.
struct BindContext {
  const GguflowKernels* kernels = nullptr;
  const ops::Parallel* parallel = nullptr;  // splits an op's work across the session's threads
  int64_t max_tokens = 0;  // largest T of a step
  int64_t n_ctx = 0;       // KV cache slots
  int max_threads = 1;     // arena concurrency (per-thread scratch)
  const std::vector<ops::KvCacheView>* caches = nullptr;  // per graph state, allocated
  std::deque<std::vector<float>>* widened = nullptr;  // owner of small weights widened to f32
  PackedWeights* packed = nullptr;  // packed copies of matmul weights (null: multiply row-major)
};

// Throws gguflow::Error naming the node, its YAML location and the weight when a weight's type
// has no kernel or a small weight cannot be decoded.
BoundNode bind_node(const graph::Graph& g, int node_index, const BindContext& ctx);

}  // namespace gguflow::exec
