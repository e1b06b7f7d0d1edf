#include "runtime/bench/bench_runner.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>
#include <set>

#include <oneapi/tbb/info.h>

#include "runtime/bench/process_memory.h"
#include "runtime/bench/roofline.h"
#include "ops/error.h"
#include "runtime/exec/session.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/graph/graph_choice.h"
#include "runtime/graph/load.h"

namespace gguflow::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct TestSpec {
  bool generation;
  int64_t n;
};

// Random token ids in [0, n_vocab), the same for every run of one configuration.
std::vector<int32_t> random_tokens(int64_t count, int64_t n_vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> pick(0, n_vocab - 1);
  std::vector<int32_t> ids(static_cast<size_t>(count));
  for (int32_t& id : ids) id = static_cast<int32_t>(pick(rng));
  return ids;
}

// One timed run of a test after `depth` tokens (none: from an empty cache); returns seconds.
// The depth is prefilled once per session (untimed) and every run rewinds to it, unless a
// sliding window's ring wrapped (then it is prefilled again, untimed).
double run_once(exec::Session& session, const TestSpec& test, const std::vector<int32_t>& ids,
                const std::vector<int32_t>& depth) {
  const int64_t n_depth = static_cast<int64_t>(depth.size());
  if (n_depth > 0 && session.n_past() >= n_depth && session.can_rewind()) {
    session.rewind(n_depth);
  } else {
    session.reset();
    if (n_depth > 0) session.prefill(depth);
  }
  const auto start = Clock::now();
  if (test.generation) {
    for (int64_t i = 0; i < test.n; ++i) session.decode(ids[static_cast<size_t>(i)]);
  } else {
    session.prefill(std::span<const int32_t>(ids.data(), static_cast<size_t>(test.n)));
  }
  return seconds_since(start);
}

}  // namespace

void validate_bench_config(const BenchConfig& c) {
  if (c.model_path.empty()) throw error("bench: --model FILE is required");
  for (int64_t n : c.prompt_sizes)
    if (n < 0 || n > exec::kMaxContext)
      throw error("bench: -p sizes must be 0..", exec::kMaxContext, " (0 skips; 2^24 is a session's context limit), found ", n);
  for (int64_t n : c.gen_sizes)
    if (n < 0 || n > exec::kMaxContext)
      throw error("bench: -n sizes must be 0..", exec::kMaxContext, " (0 skips; 2^24 is a session's context limit), found ", n);
  const bool any = std::any_of(c.prompt_sizes.begin(), c.prompt_sizes.end(), [](int64_t n) { return n > 0; }) ||
                   std::any_of(c.gen_sizes.begin(), c.gen_sizes.end(), [](int64_t n) { return n > 0; });
  if (!any) throw error("bench: no test to run: every -p and -n size is 0");
  for (int t : c.threads)
    if (t < 1) throw error("bench: -t thread counts must be >= 1, found ", t);
  if (c.repetitions < 1) throw error("bench: -r repetitions must be >= 1, found ", c.repetitions);
  if (c.n_ctx < 0) throw error("bench: --ctx must be >= 0 (0: automatic), found ", c.n_ctx);
  if (c.n_depth < 0 || c.n_depth > exec::kMaxContext)
    throw error("bench: --n-depth must be 0 to ", exec::kMaxContext, ", found ", c.n_depth);
  int64_t largest = 0;
  for (const std::vector<int64_t>* sizes : {&c.prompt_sizes, &c.gen_sizes})
    for (int64_t n : *sizes) largest = std::max(largest, n);
  // Checked here, with the other values, so that a test that cannot fit is a usage error
  // before the bandwidth measurement and the model load.
  if (c.n_ctx > 0 && c.n_depth + largest > c.n_ctx)
    throw error("bench: a test of ", largest, " tokens ",
                c.n_depth > 0 ? "after " + std::to_string(c.n_depth) + " tokens of depth " : "",
                "does not fit in --ctx ", c.n_ctx);
}

BenchReport run_bench(const BenchConfig& config, const GguflowKernels& kernels,
                      const std::string& kernels_name, const BenchProgress& progress) {
  validate_bench_config(config);
  const auto say = [&](const std::string& message) {
    if (progress) progress(message);
  };

  std::vector<TestSpec> tests;
  int64_t largest = 0;
  for (int64_t n : config.prompt_sizes)
    if (n > 0) tests.push_back({false, n}), largest = std::max(largest, n);
  for (int64_t n : config.gen_sizes)
    if (n > 0) tests.push_back({true, n}), largest = std::max(largest, n);
  const int64_t n_ctx = config.n_ctx > 0 ? config.n_ctx : std::max<int64_t>(512, config.n_depth + largest);
  std::vector<int> thread_counts = config.threads;
  if (thread_counts.empty()) thread_counts.push_back(tbb::info::default_concurrency());

  BenchReport report;
  report.model_path = config.model_path;
  report.kernels = kernels_name;
  report.scheduler =
      config.scheduler == exec::Scheduler::kFlowGraph ? "flow_graph" : "topological_loop";

  // The model and graph first (bad paths fail fast; the mapping is paged in lazily).
  say("loading " + config.model_path);
  const auto load_start = Clock::now();
  auto model = GgufFile::open(config.model_path);
  const std::string graph_path =
      config.graph_path.empty() ? graph::default_graph_path(*model, graph::Job::kGenerate) : config.graph_path;
  auto g = std::make_shared<const graph::Graph>(graph::load_graph(graph_path, model));
  report.load_seconds = seconds_since(load_start);
  report.graph_name = g->name;
  report.model_file_bytes = model->file_bytes();
  report.weight_bytes_per_token = weight_bytes_per_token(*g);
  report.n_ctx = n_ctx;
  report.n_depth = config.n_depth;

  // Then the bandwidth, at 1 thread and every requested count; its buffer is freed before any
  // peak-RSS reading that matters.
  std::set<int> bandwidth_threads(thread_counts.begin(), thread_counts.end());
  bandwidth_threads.insert(1);
  for (int t : bandwidth_threads) {
    say("streaming read bandwidth, " + std::to_string(t) + " thread(s)");
    BandwidthOptions options;
    options.threads = t;
    options.repetitions = config.bandwidth_repetitions;
    options.buffer_bytes = config.bandwidth_buffer_bytes;
    report.bandwidth.push_back(measure_read_bandwidth(options));
  }
  const auto bandwidth_at = [&](int threads) {
    for (const BandwidthResult& b : report.bandwidth)
      if (b.threads == threads) return b.median;
    return 0.0;
  };


  // One session per (thread count, test), built after the previous one is gone and after the
  // high-water mark is reset, so each row's peak RSS is that of the mapped model plus exactly
  // the session the test needs: a tg session is sized for one token per step (decode never
  // batches), a ppN session for one N-token batch.
  bool reset_ok = true;
  for (int threads : thread_counts) {
    for (const TestSpec& test : tests) {
      BenchRow row;
      row.test = (test.generation ? "tg" : "pp") + std::to_string(test.n);
      row.generation = test.generation;
      row.n_tokens = test.n;
      row.threads = threads;
      row.kernels = kernels_name;
      row.bandwidth_bytes_per_s = bandwidth_at(threads);
      const std::string label = row.test + " | " + std::to_string(threads) + " thread(s)";

      reset_ok = reset_peak_rss() && reset_ok;
      exec::SessionOptions options;
      options.n_threads = threads;
      options.n_ctx = n_ctx;
      // A tg session steps one token at a time; its depth is prefilled in batches of up to 64
      // (the arena holds max_batch rows of logits: 39 MB for Qwen's 151936 tokens).
      options.max_batch = test.generation ? std::clamp<int64_t>(config.n_depth, 1, 64) : test.n;
      options.scheduler = config.scheduler;
      options.cache_type_k = config.cache_type_k;
      options.cache_type_v = config.cache_type_v;
      exec::Session session(g, kernels, options);
      // As `gguflow run` does at load, untimed: pp and tg rows run on the packed layout.
      session.pack_weights();
      report.kv_cache_bytes = session.kv_cache_bytes();
      report.kv_cache_summary = session.kv_cache_summary();
      if (test.generation) report.arena_bytes = session.arena_bytes();
      const std::vector<int32_t> ids =
          random_tokens(test.n, session.n_vocab(), config.seed + static_cast<uint64_t>(test.n));
      const std::vector<int32_t> depth = random_tokens(config.n_depth, session.n_vocab(), config.seed);
      say(label + " | warm-up");
      run_once(session, test, ids, depth);
      for (int r = 0; r < config.repetitions; ++r) {
        say(label + " | rep " + std::to_string(r + 1) + "/" + std::to_string(config.repetitions));
        row.seconds.push_back(run_once(session, test, ids, depth));
      }
      row.peak_rss_bytes = peak_rss_bytes();

      std::vector<double> rates;
      for (double s : row.seconds) rates.push_back(static_cast<double>(test.n) / s);
      row.tokens_per_s_median = median_of(rates);
      row.tokens_per_s_min = *std::min_element(rates.begin(), rates.end());
      row.tokens_per_s_max = *std::max_element(rates.begin(), rates.end());
      if (test.generation)
        row.roofline_fraction = roofline_fraction(row.tokens_per_s_median,
                                                  report.weight_bytes_per_token,
                                                  row.bandwidth_bytes_per_s);
      report.rows.push_back(std::move(row));
    }
  }
  report.peak_rss_scope = reset_ok ? "test" : "process";
  return report;
}

}  // namespace gguflow::bench
