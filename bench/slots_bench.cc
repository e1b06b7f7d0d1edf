// Aggregate decode throughput of N sequences stepped together in one session's slots
// (Session::step_slots: the core of a server's continuous batching) against one sequence, on the
// Qwen2.5-0.5B-shaped Q4_K_M model. Each iteration is one step: every slot decodes one token
// (N rows through every matmul at once; the weights are read once per step for all of them).
// Every slot first holds a 64-token prompt; the slots are reset when their context fills.
//
// Model: $GGUFLOW_BENCH_MODEL if set, else synthesized once (bench/bench_model.h). Kernels:
// $GGUFLOW_KERNELS or the best plugin. Threads: 2; $GGUFLOW_BENCH_THREADS overrides.
//
//   build/bin/slots_bench --benchmark_enable_random_interleaving=true
//
// Counters: "tokens/s" = N tokens per step (aggregate), "per_stream" = steps per second.

#include <cstdlib>
#include <memory>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/bench_model.h"
#include "runtime/exec/session.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/graph/graph_choice.h"
#include "runtime/graph/load.h"
#include "runtime/plugins/kernel_plugins.h"

namespace {

using gguflow::exec::Session;

constexpr int64_t kPrompt = 64;
constexpr int64_t kContext = 512;

int bench_threads() {
  const char* env = std::getenv("GGUFLOW_BENCH_THREADS");
  return env && *env ? std::atoi(env) : 2;
}

// One session with `slots` slots, weights packed, every slot holding a prompt.
std::unique_ptr<Session> make_session(int64_t slots) {
  static const GguflowKernels& kernels = *gguflow::plugins::select_kernels({}).table;
  auto file = gguflow::GgufFile::open(gguflow::bench::bench_model_path());
  auto g = std::make_shared<const gguflow::graph::Graph>(gguflow::graph::load_graph(
      gguflow::graph::default_graph_path(*file, gguflow::graph::Job::kGenerate), file));
  gguflow::exec::SessionOptions o;
  o.n_threads = bench_threads();
  o.n_ctx = kContext;
  o.n_slots = slots;
  auto s = std::make_unique<Session>(g, kernels, o);
  s->pack_weights();  // one layout for every step, as a server runs
  return s;
}

void fill_prompts(Session& s, int64_t slots) {
  std::vector<int32_t> prompt(kPrompt);
  for (int64_t i = 0; i < kPrompt; ++i) prompt[static_cast<size_t>(i)] = static_cast<int32_t>(100 + i);
  for (int64_t slot = 0; slot < slots; ++slot) {
    s.reset_slot(slot);
    const Session::SlotTokens in[] = {{slot, prompt}};
    s.step_slots(in);
  }
}

void BM_DecodeSlots(benchmark::State& state) {
  const int64_t slots = state.range(0);
  auto s = make_session(slots);
  fill_prompts(*s, slots);
  std::vector<int32_t> next(static_cast<size_t>(slots), 42);
  std::vector<Session::SlotTokens> in;
  for (int64_t slot = 0; slot < slots; ++slot)
    in.push_back({slot, std::span<const int32_t>(&next[static_cast<size_t>(slot)], 1)});
  for (auto _ : state) {
    if (s->n_past(0) >= kContext) {
      state.PauseTiming();
      fill_prompts(*s, slots);
      state.ResumeTiming();
    }
    benchmark::DoNotOptimize(s->step_slots(in).data());
  }
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(slots),
                                                  benchmark::Counter::kIsIterationInvariantRate);
  state.counters["per_stream"] = benchmark::Counter(1.0, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

BENCHMARK(BM_DecodeSlots)->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Unit(benchmark::kMillisecond)
    ->UseRealTime()->Iterations(32)->Repetitions(3)->ReportAggregatesOnly(true);

BENCHMARK_MAIN();
