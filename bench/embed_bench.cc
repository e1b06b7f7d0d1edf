// An embed pass (graphs/embed.yaml: decode without the lm-head, + mean pool + L2 normalize)
// against a decode prefill (graphs/decode.yaml, logits for every position) of the same tokens,
// on the Qwen2.5-0.5B-shaped Q4_K_M model. The lm-head of Qwen2.5-0.5B is the tied 896 x 151936
// token_embd (Q8_0 in Q4_K_M files): about a fifth of the model's matmul work per token, which
// the embed graph never computes.
//
// Model: $GGUFLOW_BENCH_MODEL if set, else synthesized once into a temporary folder with the
// synth library (`gguflow synth --preset qwen2.5-0.5b --type Q4_K_M`) and removed at exit.
// Kernels: $GGUFLOW_KERNELS or the best plugin next to this executable. Threads: 2 (the CI
// machine's cores); $GGUFLOW_BENCH_THREADS overrides.
//
// Each iteration evaluates T fresh tokens from position 0 (the session is reset), so both graphs
// do identical work apart from the lm-head. After the cases it prints, per T, the embed/decode
// time ratio from the fastest repetition of each.
//
//   build/bin/embed_bench --benchmark_enable_random_interleaving=true

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/bench_model.h"
#include "runtime/exec/session.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/graph/load.h"
#include "runtime/plugins/kernel_plugins.h"

namespace {



int bench_threads() {
  const char* env = std::getenv("GGUFLOW_BENCH_THREADS");
  return env && *env ? std::atoi(env) : 2;
}

const GguflowKernels& kernels() {
  static const GguflowKernels* table = gguflow::plugins::select_kernels({}).table;
  return *table;
}

// One session per graph file, built on first use and kept for every case.
gguflow::exec::Session& session(const std::string& graph_file) {
  static std::map<std::string, std::unique_ptr<gguflow::exec::Session>> sessions;
  auto& s = sessions[graph_file];
  if (!s) {
    auto file = gguflow::GgufFile::open(gguflow::bench::bench_model_path());
    auto g = std::make_shared<const gguflow::graph::Graph>(
        gguflow::graph::load_graph(gguflow::graph::find_shipped_graph(graph_file), file));
    gguflow::exec::SessionOptions options;
    options.n_threads = bench_threads();
    options.n_ctx = 512;
    s = std::make_unique<gguflow::exec::Session>(g, kernels(), options);
  }
  return *s;
}

// T token ids spread over the vocabulary (a fixed LCG: the same ids for both graphs).
std::vector<int32_t> tokens(int64_t n, int64_t n_vocab) {
  std::vector<int32_t> ids(static_cast<size_t>(n));
  uint64_t x = 12345;
  for (auto& id : ids) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    id = static_cast<int32_t>((x >> 33) % static_cast<uint64_t>(n_vocab));
  }
  return ids;
}

void run_pass(benchmark::State& state, const std::string& graph_file) {
  gguflow::exec::Session& s = session(graph_file);
  const auto ids = tokens(state.range(0), s.n_vocab());
  for (auto _ : state) {
    s.reset();
    benchmark::DoNotOptimize(s.prefill(ids).data());
  }
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(state.range(0)),
                                                  benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = s.n_threads();
}

void BM_DecodePrefill(benchmark::State& state) { run_pass(state, "decode.yaml"); }
void BM_EmbedPass(benchmark::State& state) { run_pass(state, "embed.yaml"); }

// A pass is 0.1-10 s of work: 2 iterations a repetition, 3 repetitions; the ratio uses the
// fastest repetition ("min"), the one least disturbed by other processes on a shared machine.
double min_of(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }
#define GGUFLOW_EMBED_CASE(fn)                                                               \
  BENCHMARK(fn)->Arg(16)->Arg(64)->Arg(128)->Unit(benchmark::kMillisecond)->UseRealTime()     \
      ->Iterations(2)->Repetitions(3)->ComputeStatistics("min", min_of)
GGUFLOW_EMBED_CASE(BM_DecodePrefill);
GGUFLOW_EMBED_CASE(BM_EmbedPass);

// Collects the fastest repetition (or single runs) per case name for the ratio printed at the end.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      const bool min = run.aggregate_name == "min";
      if (run.run_type == Run::RT_Aggregate && !min) continue;
      const std::string name = run.run_name.function_name + "/" + run.run_name.args;
      if (min || !seen_min_.count(name)) seconds_[name] = run.GetAdjustedRealTime();
      if (min) seen_min_[name] = true;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    for (const char* t : {"16", "64", "128"}) {
      const auto d = seconds_.find(std::string("BM_DecodePrefill/") + t);
      const auto e = seconds_.find(std::string("BM_EmbedPass/") + t);
      if (d == seconds_.end() || e == seconds_.end()) continue;
      std::printf("T=%s: embed %.1f ms, decode prefill %.1f ms: embed/decode = %.3f (%.1f%% less time)\n",
                  t, e->second, d->second, e->second / d->second, 100.0 * (1.0 - e->second / d->second));
    }
  }

 private:
  std::map<std::string, double> seconds_;
  std::map<std::string, bool> seen_min_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
