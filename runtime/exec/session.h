// A Session runs one sequence through a bound graph: prefill(prompt) as batches, then
// decode(token) one step at a time, keeping the KV cache between calls.
//
// Construction plans everything once: activation buffers in one arena (reused between tensors
// whose lifetimes cannot overlap), per-layer KV caches of n_ctx slots (f32, or f16 / q8_0 /
// q4_0 rows: SessionOptions::cache_type_k/v), weight views into the
// GGUF mapping, the flow graph. No step allocates.
//
// Graph contract: every graph input is read by op slots that declare what the session feeds
// them (ops::Feed: the step's token ids or their positions; one input of token ids is
// required); outputs[0] is the result returned per step (logits [n_vocab, T], or a pooled
// [n, 1] vector for embedding graphs).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "ops/attention.h"
#include "plugins/abi/kernel_abi.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/large_buffer.h"
#include "runtime/exec/packed_weights.h"
#include "runtime/graph/graph.h"

namespace gguflow::exec {

// The largest --ctx a session accepts (2^24 tokens): beyond it the KV cache of even a tiny
// model is gigabytes, and products of it with row sizes approach 2^64.
inline constexpr int64_t kMaxContext = int64_t{1} << 24;

struct SessionOptions {
  int n_threads = 0;          // 0: every core; bounds all work through one tbb::task_arena
  int64_t n_ctx = 0;          // KV cache slots; 0: min(model context, 4096); at most kMaxContext
  int64_t max_batch = 512;    // tokens per graph step during prefill (capped at n_ctx)
  // Independent sequences one step may hold (evaluate_sequences); > 1 also lets max_batch
  // exceed n_ctx, and sizes full caches for max(n_ctx, max_batch) rows.
  int64_t max_sequences = 1;
  // Sequences the session keeps between steps, each in its own slot of every KV cache
  // (step_slots: a server's concurrent requests decoded together). Slot 0 is the one prefill()
  // and decode() use.
  int64_t n_slots = 1;
  Scheduler scheduler = Scheduler::kFlowGraph;
  // From the first decode step on, multiply packed copies of the weights the kernel plugin has
  // a packed layout for (same results, faster decode; runtime/exec/packed_weights.h).
  // Default: on unless GGUFLOW_PACK_WEIGHTS=0.
  bool pack_weights = PackedWeights::enabled_by_environment();
  // Element types of the cached keys and values (--cache-type-k/-v): set, they apply to every
  // state; unset, each state's `cache_type_k/v` attribute in the graph, else f32. A smaller
  // type is a smaller cache (q8_0: 34 bytes per 32 elements) read in place by attention.
  std::optional<ops::KvCacheType> cache_type_k, cache_type_v;
};

class Session {
 public:
  // `kernels` must outlive the session (plugin tables are static in their library). Throws
  // gguflow::Error for a graph without the expected inputs, a weight type the kernels lack, or
  // a bad option.
  Session(std::shared_ptr<const graph::Graph> graph, const GguflowKernels& kernels,
          SessionOptions options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Evaluates `tokens` at positions n_past() .. n_past() + size - 1 (batches of max_batch) and
  // appends them to the cache. When `all_outputs` is given it receives the output rows of every
  // token, [tokens.size()][output_width()] (one row for graphs whose output has no token dim).
  // Returns the output row of the last token; it stays valid until the next call.
  // Throws gguflow::Error (naming the id / the counts) for a token id outside the vocabulary
  // or when the context would overflow.
  std::span<const float> prefill(std::span<const int32_t> tokens,
                                 std::vector<float>* all_outputs = nullptr);
  // One decode step: prefill of a single token (matrix-vector kernels). The first one packs the
  // weights the plugin has a packed layout for (runtime/exec/packed_weights.h).
  std::span<const float> decode(int32_t token);
  // Forgets the sequence (n_past() = 0); the cache is overwritten by the next tokens.
  void reset() { slot_past_[0] = 0; }
  // Forgets slot 0's tokens from position n_past on, keeping the first n_past (a benchmark's
  // context depth, prefilled once). Throws when n_past is above n_past() or a sliding window's
  // ring has overwritten rows of the kept positions.
  void rewind(int64_t n_past);
  // rewind would keep every cached row intact: no sliding window's ring has wrapped yet.
  bool can_rewind() const;

  // New tokens of the sequence in one slot, for step_slots.
  struct SlotTokens {
    int64_t slot = 0;
    std::span<const int32_t> tokens;
  };
  // One graph step over several slots' new tokens (each slot at most once), every one at its
  // own next positions and attending only to its own cache slot: what a server runs to decode
  // its requests together and to prefill a waiting prompt beside them. Each sequence gets the
  // numbers it would get alone (no row's arithmetic depends on its neighbours; the weights'
  // layout, row-major before the first decode() and packed after it, must be the same for the
  // comparison: pack_weights()). Returns per entry the output row of its last token (valid
  // until the next step). Throws gguflow::Error for a bad slot, an empty entry, a bad id, a
  // slot's context overflow, or more than max_batch() tokens in all.
  std::vector<std::span<const float>> step_slots(std::span<const SlotTokens> inputs);
  void reset_slot(int64_t slot);
  int64_t n_past(int64_t slot) const;
  int64_t n_slots() const { return static_cast<int64_t>(slot_past_.size()); }
  // Packs the weights the plugin has a packed layout for, now: decode() does at its first call;
  // `gguflow run` and `bench` right after load, so that the prompt runs on the packed layout too
  // and the first generated token does not wait for the packing. Idempotent.
  void pack_weights();
  // Runs f() inside the session's threads (its tbb::task_arena of n_threads()): work a caller
  // splits with oneTBB between steps (a server sampling its sequences) keeps the thread bound.
  template <class F>
  void run_in_threads(F&& f) {
    arena_.execute(std::forward<F>(f));
  }

  // Evaluates independent sequences together in one graph step (a ragged batch: texts embedded
  // at once). Each starts at position 0 and attends only to itself; each gets exactly the
  // numbers it would get alone in a fresh session (same keys in the same order, row-wise ops).
  // Appends to `outputs` one row per sequence for a pooled graph, else one row per token, in
  // order. Forgets the session's own sequence (as reset()). Throws gguflow::Error when the
  // graph cannot (a kv_project node keeps one sequence), for more than max_sequences()
  // sequences or max_batch() tokens in total, an empty or too long sequence, or a bad id.
  void evaluate_sequences(std::span<const std::span<const int32_t>> sequences,
                          std::vector<float>& outputs);
  int64_t max_sequences() const { return max_sequences_; }
  int64_t max_batch() const { return max_batch_; }

  int64_t n_past() const { return slot_past_[0]; }
  int64_t n_ctx() const { return n_ctx_; }
  int64_t n_vocab() const { return n_vocab_; }           // valid token ids are [0, n_vocab)
  int64_t output_width() const { return output_width_; }  // floats per output row
  bool output_per_token() const { return output_per_token_; }  // false: one (pooled) row per sequence
  int n_threads() const { return n_threads_; }
  const GguflowKernels& kernels() const { return kernels_; }
  const graph::Graph& graph() const { return *graph_; }
  size_t arena_bytes() const { return arena_bytes_; }
  size_t kv_cache_bytes() const { return kv_bytes_; }
  // "1572864 bytes = 1.5 MiB (5 x 527 rows (window ring) = 0.3 MiB, 1 x 4096 rows = 1.2 MiB),
  // K q8_0, V q8_0":
  // the caches grouped by kind of layer and their element types, for --verbose and bench
  // reports.
  std::string kv_cache_summary() const;
  size_t packed_weight_bytes() const { return packed_.bytes(); }  // packed so far (0 before pack_weights())
  // The cache of each graph state (g.states order): k [rows][w.k], v [rows][w.v] elements of
  // its k_type / v_type with w = graph().states[s].layout (set by the op that writes the
  // state), kept whole or as a block per KV head (KvCacheView::heads; attention's caches where
  // the types allow; ops::kv_rows_f32 reads either as whole rows); position p in row p % rows
  // (rows = n_ctx, or a ring for a sliding window). Read by `gguflow kv` to collect
  // keys/values; writable so a study can clear it (KvCacheView::k_bytes).
  const std::vector<ops::KvCacheView>& kv_caches() const { return caches_; }

 private:
  // Construction, in order: each step reads what the ones before it set.
  void find_inputs_and_output();          // feeds_, output_width_, output_per_token_
  void size_context(const SessionOptions& options);  // n_ctx_, max_batch_
  void find_vocabulary();                 // n_vocab_
  // kv_storage_, caches_; the types from `options` over the graph's.
  void allocate_kv_caches(const SessionOptions& options);
  int64_t cache_rows(const graph::State& s) const;
  void link_dependencies();               // predecessors_
  void bind_nodes();                      // nodes_
  void plan_arena();                      // arena, io_, feed and output offsets

  // Runs one graph step over tokens[0..n) of slot 0 at positions n_past().. (n <= max_batch_).
  // With `last_output_only` the output producer may write just the last token's row (row 0).
  void step(const int32_t* tokens, int64_t n, bool last_output_only);
  // Feeds tokens and each sequence's positions (step_sequences_, token_sequence_) and runs the
  // graph once.
  void run_step(const int32_t* tokens, int64_t n, bool last_output_only);
  // Throws naming the first id outside [0, n_vocab).
  void check_token_ids(std::span<const int32_t> tokens) const;
  // Per-step sequence tables (StepView::sequences, token_sequence), reused between steps.
  std::vector<ops::StepSequence> step_sequences_;
  std::vector<int32_t> token_sequence_;

  // A graph input the session writes before each step.
  struct FeedSlot {
    ops::Feed feed = ops::Feed::kNone;
    int tensor = -1;     // index into graph().tensors
    size_t offset = 0;   // in the arena (plan_arena)
  };

  std::shared_ptr<const graph::Graph> graph_;
  const GguflowKernels& kernels_;
  int n_threads_ = 1;
  int64_t n_ctx_ = 0, max_batch_ = 0, n_vocab_ = 0, output_width_ = 0, max_sequences_ = 1;
  bool output_per_token_ = true;
  bool last_output_only_supported_ = false;  // the output's producer can compute one row
  std::vector<int64_t> slot_past_ = {0};  // tokens cached per slot

  tbb::task_arena arena_;
  // Default-initialized (never zero-filled): its pages become resident only when a step first
  // writes them, so a decode step touches the one-token part of buffers sized for max_batch.
  std::unique_ptr<std::byte[]> arena_storage_;
  std::byte* arena_base_ = nullptr;
  size_t arena_bytes_ = 0, kv_bytes_ = 0;
  // Every cache: [state][k|v][slots * rows][row bytes], uninitialized; on huge pages when there
  // are several slots (large_buffer.h).
  LargeBuffer kv_storage_;
  std::vector<ops::KvCacheView> caches_;   // per graph state
  std::deque<std::vector<float>> widened_;  // small non-F32 weights decoded once
  PackedWeights packed_;             // matmul weight slots; packed copies (plugin layout)
  bool weights_packed_ = false;      // pack_all() ran (pack_weights(), or the first decode step)
  std::vector<FeedSlot> feeds_;
  size_t output_offset_ = 0;
  std::vector<BoundNode> nodes_;
  std::vector<NodeIo> io_;
  std::vector<std::vector<int>> predecessors_;
  std::unique_ptr<Executor> executor_;
};

}  // namespace gguflow::exec
