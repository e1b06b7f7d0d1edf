// What an op sees when a session binds one of its nodes, and what it hands back.
//
// An op's bind function (OpSchema::bind) reads its typed attributes, shapes and weights through
// `Binder` once, checks what only the session can check (kernels for a weight type), sizes its
// scratch and returns a `BoundOp`: a closure that runs one step on arena buffers. The executor
// (runtime/exec) implements `Binder`; ops never see the flow graph, YAML or the thread pool.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ops/attention.h"
#include "ops/op_schema.h"
#include "ops/parallel.h"
#include "ops/weight_view.h"
#include "plugins/abi/kernel_abi.h"

namespace gguflow::ops {

// Where a node's buffers are in this step: offsets from the arena base, from the buffer plan.
struct NodeIo {
  std::vector<size_t> inputs;   // per schema input slot; kAbsent for an absent optional input
  std::vector<size_t> outputs;  // per schema output
  std::vector<size_t> scratch;  // per BoundOp::scratch_bytes entry
  static constexpr size_t kAbsent = SIZE_MAX;
};

// One sequence of a step. A step may hold several independent sequences (a ragged batch:
// texts embedded together, requests decoded together); each attends only to itself and owns a
// region of every KV cache: position p of it lives in row cache_row + p % cache_rows of the
// cache's whole allocation, or, when cache_rows is 0, in its slot's rows (a sequence the
// session keeps between steps, possibly a ring; KvCacheView).
struct StepSequence {
  int64_t begin = 0, end = 0;  // its tokens: rows [begin, end) of every per-token tensor
  int64_t cache_row = 0;
  int64_t cache_rows = 0;
  int64_t length = 0;          // its last position + 1 once stored; 0: from the step's positions
  int64_t slot = 0;            // the session's slot (cache_rows 0)
};

struct StepView {
  std::byte* arena = nullptr;
  int64_t n_tokens = 0;  // T of this step
  // Only the last token's row of the graph's output is wanted (a prompt whose caller keeps
  // only the last logits): the node producing a per-token output computes that one row and
  // writes it as row 0. Every other node still runs on all T rows (the KV cache needs them).
  bool last_output_only = false;
  // The step's sequences, in token order, covering [0, n_tokens); token_sequence[t] is the
  // index of token t's (nullptr: all in sequences[0]). A tensor without the token dim (a
  // pooled vector) has one row per sequence.
  const StepSequence* sequences = nullptr;
  int64_t n_sequences = 1;
  const int32_t* token_sequence = nullptr;

  const StepSequence& sequence_of(int64_t token) const {
    return sequences[token_sequence ? token_sequence[token] : 0];
  }

  // Rows of an activation in this step: T with the token dim, else one per sequence.
  int64_t rows(bool per_token) const { return per_token ? n_tokens : n_sequences; }
  // Elements of an activation of `shape` in this step.
  int64_t elements(const Shape& shape) const;
};

// A buffer of this step as T*: `io.inputs[0]` etc. are byte offsets into the arena.
template <typename T>
T* at(const StepView& step, size_t offset) {
  return reinterpret_cast<T*>(step.arena + offset);
}

using RunFn = std::function<void(const StepView& step, const NodeIo& io)>;

struct BoundOp {
  std::vector<size_t> scratch_bytes;  // sized for the largest step (Binder::max_tokens)
  RunFn run;
  // It may produce the graph output and honours StepView::last_output_only.
  bool writes_last_output_only = false;
};

// Elements of one row of an activation: the product of its dims other than T.
inline int64_t row_length(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s.dims)
    if (d != kTokenDim) n *= d;
  return n;
}
inline bool has_token_dim(const Shape& s) {
  return std::find(s.dims.begin(), s.dims.end(), kTokenDim) != s.dims.end();
}
inline int64_t StepView::elements(const Shape& shape) const {
  return row_length(shape) * rows(has_token_dim(shape));
}

class Binder {
 public:
  virtual ~Binder() = default;

  // "node 'blk.0.attn_q' (matmul) at graphs/decode.yaml:12:7": the prefix of bind errors.
  virtual std::string where() const = 0;
  virtual const GguflowKernels& kernels() const = 0;
  // Splits work across the session's threads (run time only; outlives the BoundOp).
  virtual const Parallel& parallel() const = 0;
  virtual int64_t max_tokens() const = 0;  // largest T of a step
  virtual int64_t n_ctx() const = 0;       // KV cache slots
  virtual int max_threads() const = 0;     // concurrent threads: per-thread scratch copies

  virtual const Attrs& attrs() const = 0;  // every declared attribute, typed, defaults filled
  // Shapes (ne0 first, kTokenDim for T); nullptr for an absent optional input.
  virtual const Shape* input_shape(size_t slot) const = 0;
  virtual const Shape& output_shape(size_t slot) const = 0;
  // The node produces the graph's first output (the row a caller reads after a step).
  virtual bool writes_graph_output() const = 0;

  virtual bool has_weight(size_t slot) const = 0;
  virtual const std::string& weight_name(size_t slot) const = 0;  // GGUF tensor name
  // A view of the weight as stored (row-major, in the model's mapping).
  virtual WeightView weight(size_t slot) const = 0;
  // The weight through the session's slot for it: row-major now, possibly the plugin's packed
  // layout once the session packs (matmul: the weight is multiplied; else only rows are
  // looked up). Read the pointee at run time, never at bind time.
  virtual const WeightView* weight_slot(size_t slot, bool matmul) = 0;
  // A small weight (gain, bias, mean) as f32: the mapping itself when stored as F32, else
  // decoded once into session memory; nullptr when the optional weight is absent.
  virtual const float* f32_weight(size_t slot) = 0;

  // The cache of the state the node writes (ops with OpSchema::state): k [n_ctx][widths.k],
  // v [n_ctx][widths.v] floats as the op's StateRule sized them.
  virtual KvCacheView kv_cache() const = 0;
};

}  // namespace gguflow::ops
