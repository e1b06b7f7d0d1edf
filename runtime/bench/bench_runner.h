// `gguflow bench`'s measurements, in the manner of llama-bench: one model and graph; for each
// thread count and test a fresh session (tg: one token per step; ppN: one N-token batch); each test (ppN: prefill of N tokens as one prompt from an empty
// cache; tgN: N decode steps from an empty cache) runs once as a warm-up and then `repetitions`
// times; tokens/s of every repetition, their median, min and max; the process's peak RSS during
// the test; and, in the same invocation, the streaming read bandwidth at every thread count so
// that each tg row carries its roofline fraction (runtime/bench/roofline.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ops/kv_cache_type.h"
#include "plugins/abi/kernel_abi.h"
#include "runtime/bench/memory_bandwidth.h"
#include "runtime/exec/executor.h"

namespace gguflow::bench {

struct BenchConfig {
  std::string model_path;
  std::string graph_path;                 // empty: the shipped graph for the model's architecture
  std::vector<int64_t> prompt_sizes{512};  // pp tests; 0 entries are skipped
  std::vector<int64_t> gen_sizes{128};     // tg tests; 0 entries are skipped
  std::vector<int> threads;                // empty: every core
  int repetitions = 5;
  int64_t n_ctx = 0;                       // 0: max(512, largest test)
  exec::Scheduler scheduler = exec::Scheduler::kFlowGraph;
  int bandwidth_repetitions = 5;
  size_t bandwidth_buffer_bytes = size_t{256} << 20;
  uint64_t seed = 1234;                    // token ids of the prompts and decode inputs
  // Tokens in the cache before each test (llama-bench's -d): prefilled untimed, so a tg row
  // measures decode at that context depth (attention over n_depth cached rows).
  int64_t n_depth = 0;
  // KV cache element types (--cache-type-k/-v); unset: the graph's, else f32.
  std::optional<ops::KvCacheType> cache_type_k, cache_type_v;
};

struct BenchRow {
  std::string test;         // "pp512", "tg128"
  bool generation = false;  // tg (decode) row
  int64_t n_tokens = 0;
  int threads = 0;
  std::string kernels;      // plugin name, e.g. "avx2"
  std::vector<double> seconds;  // per repetition (warm-up excluded)
  double tokens_per_s_median = 0, tokens_per_s_min = 0, tokens_per_s_max = 0;
  uint64_t peak_rss_bytes = 0;  // VmHWM at the end of the test (see peak_rss_scope)
  double bandwidth_bytes_per_s = 0;  // median streaming read bandwidth at `threads`
  double roofline_fraction = 0;      // tg rows only (0 for pp)
};

struct BenchReport {
  std::string model_path, graph_name, kernels, scheduler;
  uint64_t model_file_bytes = 0;
  uint64_t weight_bytes_per_token = 0;
  int64_t n_ctx = 0;
  int64_t n_depth = 0;  // tokens cached before each test (BenchConfig::n_depth)
  uint64_t kv_cache_bytes = 0;  // what the session allocated, every state's K and V
  // The caches grouped by kind of layer (exec::Session::kv_cache_summary), as the last test
  // sized them (a sliding-window ring depends on the step size).
  std::string kv_cache_summary;
  uint64_t arena_bytes = 0;  // activation arena of a decode (tg) session; 0 without tg tests
  double load_seconds = 0;  // open + bind the graph (mmap; weights are paged in lazily)
  // "test": VmHWM was reset before each test, so peak_rss_bytes is the peak during it;
  // "process": the kernel refused the reset, so it is the peak since the process started.
  std::string peak_rss_scope;
  std::vector<BandwidthResult> bandwidth;  // one per distinct thread count (1 always included)
  std::vector<BenchRow> rows;
};

// "tg128 | 2 threads | rep 3/5" style messages while it runs (may be empty).
using BenchProgress = std::function<void(const std::string& message)>;

// Throws gguflow::Error naming the option: sizes (at most a session's context, 2^24), threads,
// repetitions, --ctx. Before anything is loaded (the CLI reports these as usage errors).
void validate_bench_config(const BenchConfig& config);

// Validates the configuration (validate_bench_config, and a test larger than the context),
// then measures. `kernels_name` labels rows.
BenchReport run_bench(const BenchConfig& config, const GguflowKernels& kernels,
                      const std::string& kernels_name, const BenchProgress& progress = {});

}  // namespace gguflow::bench
