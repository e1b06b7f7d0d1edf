// Scheduling overhead of the oneTBB flow-graph executor (issue 6): one decode step of the
// Qwen2.5-0.5B-shaped Q4_K_M model through graphs/decode.yaml, run by Scheduler::kFlowGraph
// (one continue_node per op, one wait_for_all per step) and by Scheduler::kTopologicalLoop (the
// same bound nodes called in order), at 1 and 2 threads. After the cases it prints, per thread
// count, overhead = (flow-graph step time / loop step time - 1) * 100 %, from the median and from
// the fastest of the repetitions (negative: the flow graph is faster, e.g. because Q/K/V or
// gate/up overlap).
//
// Model: $GGUFLOW_BENCH_MODEL if set, else synthesized once into a temporary folder with the
// synth library (`gguflow synth --preset qwen2.5-0.5b --type Q4_K_M`) and removed at exit.
// Kernels: $GGUFLOW_KERNELS or the best plugin next to this executable.
//
// Each case decodes positions 0..127 cyclically (reset every 128 steps), so both schedulers
// see the same attention lengths.
//
//   build/bin/exec_overhead_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only --benchmark_enable_random_interleaving

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/bench_model.h"
#include "runtime/exec/session.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/graph/load.h"
#include "runtime/plugins/kernel_plugins.h"

namespace {

using gguflow::exec::Scheduler;

constexpr int64_t kCycle = 128;  // decode positions per cycle


std::shared_ptr<const gguflow::graph::Graph> decode_graph() {
  static std::shared_ptr<const gguflow::graph::Graph> g = [] {
    auto file = gguflow::GgufFile::open(gguflow::bench::bench_model_path());
    return std::make_shared<const gguflow::graph::Graph>(
        gguflow::graph::load_graph(gguflow::graph::find_shipped_graph("decode.yaml"), file));
  }();
  return g;
}

void BM_DecodeStep(benchmark::State& state, Scheduler scheduler) {
  const gguflow::plugins::SelectedKernels& kernels = gguflow::plugins::select_kernels();
  gguflow::exec::SessionOptions options;
  options.n_threads = static_cast<int>(state.range(0));
  options.n_ctx = 512;
  options.scheduler = scheduler;
  gguflow::exec::Session session(decode_graph(), *kernels.table, options);
  int32_t token = 1;
  for (int i = 0; i < 4; ++i) session.decode(token);  // warm-up: weights paged in
  session.reset();
  for (auto _ : state) {
    if (session.n_past() == kCycle) session.reset();
    benchmark::DoNotOptimize(session.decode(token).data());
    token = (token * 7919 + 13) % 1000 + 1;
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(kernels.plugin.name);
}

// The fastest repetition: on a shared machine interference only ever adds time, so the minimum
// is the most stable estimate of a step's own cost.
double fastest(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

BENCHMARK_CAPTURE(BM_DecodeStep, flow_graph, Scheduler::kFlowGraph)
    ->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime()
    ->ComputeStatistics("min", fastest);
BENCHMARK_CAPTURE(BM_DecodeStep, topological_loop, Scheduler::kTopologicalLoop)
    ->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime()
    ->ComputeStatistics("min", fastest);

// Console output as usual, plus the step times kept for the overhead summary: per case the
// single run, or with repetitions the "median" and "min" aggregates.
class OverheadReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      const std::string name = run.run_name.str();
      if (run.run_type == Run::RT_Iteration) step_ms_[{name, "single"}] = run.GetAdjustedRealTime();
      else step_ms_[{name, run.aggregate_name}] = run.GetAdjustedRealTime();
    }
  }

  void print_overhead() const {
    for (const char* statistic : {"single", "median", "min"}) {
      for (const char* threads : {"1", "2"}) {
        const std::string suffix = std::string("/") + threads + "/min_time:2.000/real_time";
        const auto flow = step_ms_.find({"BM_DecodeStep/flow_graph" + suffix, statistic});
        const auto loop = step_ms_.find({"BM_DecodeStep/topological_loop" + suffix, statistic});
        if (flow == step_ms_.end() || loop == step_ms_.end()) continue;
        std::printf("scheduling overhead (%s), %s thread(s): flow graph %.3f ms vs loop %.3f ms "
                    "per step: %+.2f %%\n", statistic, threads, flow->second, loop->second,
                    100.0 * (flow->second / loop->second - 1.0));
      }
    }
  }

 private:
  std::map<std::pair<std::string, std::string>, double> step_ms_;  // (case, statistic) -> ms
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  OverheadReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_overhead();
  benchmark::Shutdown();
  return 0;
}
