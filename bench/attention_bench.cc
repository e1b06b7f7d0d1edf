// Prompt attention (ops::attention_heads) on one thread: one N-token causal prompt of one layer
// against its own f32 / f16 cache, for the head shapes of the presets (Google Benchmark); and a
// decode token's attention, the last position's heads against the N keys.
//
//   build/bin/attention_bench                        # the best plugin for this CPU
//   GGUFLOW_KERNELS=avx2 build/bin/attention_bench   # a given plugin
//
// Each case reports GFLOP/s = 2 products (q . k, p . v) x 2 flops x head_dim x n_head x the
// N (N + 1) / 2 visible (query, key) pairs, per second: the f32 multiply-add rate prompt
// attention reaches, to set against the machine's f32 FMA peak (16 lanes x 2 flops per cycle
// per 512-bit FMA). The cache is written once before timing; softmax and scaling are in the time.
//
// A decode token reads each key and value once, and in a server step its sequence's cache comes
// from DRAM (8 sequences x 24 layers of cache pass between two reads of a layer's). So a decode
// case cycles through copies of its layer, caches and queries, that fill 256 MiB, as
// kernels_bench does with weights (GGUFLOW_BENCH_WORKING_SET overrides, in bytes; 1: one copy,
// the caches' speed). A prompt reads every key once per block of queries and runs on one layer.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <random>
#include <vector>

#include "bench/selected_kernels_main.h"
#include "ops/attention.h"
#include "ops/kv_cache_type.h"

namespace {

const GguflowKernels* g_kernels = nullptr;

struct HeadShape {
  const char* name;
  int64_t n_head, n_kv_head, head_dim;
};

// Qwen2.5-0.5B (14 / 2 x 64) and Qwen3-0.6B (16 / 8 x 128): a narrow and a wide cache row.
const HeadShape kShapes[] = {{"qwen2.5-0.5b", 14, 2, 64}, {"qwen3-0.6b", 16, 8, 128}};
// The cache's layout (ops::KvCacheView::heads): every KV head in one row (the layout of a view
// built by hand), or a block per KV head (what a session allocates).
const char* const kLayouts[] = {"rows", "head-major"};
// Bytes of layer copies a decode case cycles through (see the top).
size_t working_set_bytes() {
  const char* env = std::getenv("GGUFLOW_BENCH_WORKING_SET");
  return env && *env ? std::strtoull(env, nullptr, 10) : size_t{256} << 20;
}

const gguflow::ops::KvCacheType kTypes[] = {gguflow::ops::KvCacheType::kF32, gguflow::ops::KvCacheType::kF16};

// One layer's n-token causal sequence: its queries and a cache holding its keys and values.
struct Layer {
  gguflow::ops::AttentionShape s;
  std::vector<float> q;
  std::vector<std::byte> k_rows, v_rows;
  gguflow::ops::KvCacheView cache;
  std::vector<int32_t> positions;

  Layer(const Layer&) = delete;  // `cache` points into k_rows and v_rows
  Layer& operator=(const Layer&) = delete;
  Layer(const HeadShape& shape, gguflow::ops::KvCacheType type, bool head_major, int64_t n)
      : s{shape.n_head, shape.n_kv_head, shape.head_dim} {
    namespace ops = gguflow::ops;
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const auto random = [&](int64_t count) {
      std::vector<float> v(count);
      for (float& x : v) x = normal(rng);
      return v;
    };
    q = random(n * s.q_row());
    const std::vector<float> k_new = random(n * s.kv_row()), v_new = random(n * s.kv_row());
    cache.heads = head_major ? s.n_kv_head : 1;
    const size_t row_bytes = ops::kv_cache_row_bytes(type, s.kv_row() / cache.heads);
    k_rows.resize(row_bytes * n * cache.heads);
    v_rows.resize(row_bytes * n * cache.heads);
    cache.k = k_rows.data();
    cache.v = v_rows.data();
    cache.rows = n;
    cache.k_type = cache.v_type = type;
    cache.k_row_bytes = cache.v_row_bytes = row_bytes;
    if (head_major) cache.k_head_stride = cache.v_head_stride = row_bytes * n;
    positions.resize(n);
    for (int64_t t = 0; t < n; ++t) positions[t] = static_cast<int32_t>(t);
    ops::kv_cache_store(*g_kernels, s, k_new.data(), v_new.data(), positions.data(), n, cache);
  }
};

// Every head of the last `count` of a layer's n positions (count = n: the prompt; 1: a decode
// token, what one sequence of a server step costs per layer) against the keys each sees.
void RunAttention(benchmark::State& state, int64_t count) {
  namespace ops = gguflow::ops;
  const HeadShape& shape = kShapes[state.range(0)];
  const ops::KvCacheType type = kTypes[state.range(1)];
  const bool head_major = state.range(2) != 0;
  const int64_t n = state.range(3), first = n - count;
  // A prompt: one layer; a decode token: copies filling the working set (see the top).
  std::vector<std::unique_ptr<const Layer>> layers;
  layers.push_back(std::make_unique<const Layer>(shape, type, head_major, n));
  const Layer& l = *layers[0];
  if (count == 1) {
    const size_t layer_bytes = l.k_rows.size() + l.v_rows.size() + sizeof(float) * l.q.size();
    while (layers.size() * layer_bytes < working_set_bytes())
      layers.push_back(std::make_unique<const Layer>(shape, type, head_major, n));
  }
  std::vector<float> scratch(ops::attention_scratch_floats(l.s, n, l.cache)), out(count * l.s.q_row());
  size_t next = 0;
  for (auto _ : state) {
    const Layer& c = *layers[next];
    next = (next + 1) % layers.size();
    ops::attention_heads(*g_kernels, c.s, ops::AttentionScoring{}, c.q.data() + first * c.s.q_row(),
                         c.positions.data() + first, n, c.cache, 0, count * c.s.n_head, n, scratch.data(), out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  // Query t (position first + t) sees first + t + 1 keys.
  const double pairs = static_cast<double>(count) * (first + 1) + static_cast<double>(count) * (count - 1) / 2;
  const double flops = 4.0 * l.s.head_dim * l.s.n_head * pairs;
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(std::string(shape.name) + " " + ops::kv_cache_type_name(type) + " " + kLayouts[state.range(2)] +
                 (layers.size() > 1 ? ", " + std::to_string(layers.size()) + " copies" : std::string()));
}

void BM_PromptAttention(benchmark::State& state) { RunAttention(state, state.range(3)); }
void BM_DecodeAttention(benchmark::State& state) { RunAttention(state, 1); }

void register_cases() {
  struct Kind {
    const char* name;
    void (*fn)(benchmark::State&);
    std::initializer_list<int64_t> lengths;
    const char* length_name;
    benchmark::TimeUnit unit;
  };
  const Kind kinds[] = {{"prompt_attention", BM_PromptAttention, {64, 512, 2048}, "tokens", benchmark::kMillisecond},
                        {"decode_attention", BM_DecodeAttention, {64, 128, 512}, "keys", benchmark::kMicrosecond}};
  for (const Kind& kind : kinds)
    for (int64_t shape = 0; shape < static_cast<int64_t>(std::size(kShapes)); ++shape)
      for (int64_t type = 0; type < static_cast<int64_t>(std::size(kTypes)); ++type)
        for (int64_t layout = 0; layout < static_cast<int64_t>(std::size(kLayouts)); ++layout)
          for (int64_t n : kind.lengths)
            benchmark::RegisterBenchmark(kind.name, kind.fn)
                ->Args({shape, type, layout, n})
                ->ArgNames({"shape", "cache", "head_major", kind.length_name})
                ->Unit(kind.unit);
}

}  // namespace

int main(int argc, char** argv) {
  return gguflow::bench::run_with_selected_kernels(argc, argv, &g_kernels, register_cases);
}
