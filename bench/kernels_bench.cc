// Kernel plugin throughput on Qwen2.5-0.5B's matrix shapes (Google Benchmark).
//
//   build/bin/kernels_bench                        # the best plugin for this CPU
//   GGUFLOW_KERNELS=avx2 build/bin/kernels_bench   # a given plugin
//
// Cases: decode (mat_vec, one activation row) and prefill (mat_mat with 64 and 512 rows, and
// the same rows done one mat_vec at a time for comparison), on 1 and 2 threads. The output rows
// are split across the threads of a task_arena exactly as a session splits a matmul node
// (exec::parallel_row_units: a few ranges per thread, cut at packed-group multiples), and the
// timing loop runs inside the arena as a session step does. Where the plugin packs the shape's
// type (pack_rows > 0, ABI 2), decode_packed and prefill{64,512}_packed run mat_vec_packed /
// mat_mat_packed on packed copies.
//
// Weights live in DRAM as they do during inference (a model is far larger than the caches): each
// case cycles through enough copies of its matrix to exceed kWorkingSetBytes. Counters:
//   GB/s      weight bytes read per second
//   GFLOP/s   2 * rows * n * activation rows per second
//   stream    decode cases: this machine's streaming read bandwidth with the same threads,
//             GB/s, measured (best of 3 passes) just before the case, so that the ratio below
//             compares two measurements of the same minute (on a shared VM the bandwidth drifts
//             by +-25 % over minutes)
//   of_bw     decode GB/s / stream
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "runtime/exec/parallel_rows.h"
#include "runtime/plugins/kernel_plugins.h"
#include "runtime/quant/quant.h"

namespace {

constexpr size_t kWorkingSetBytes = size_t{256} << 20;

const GgufflowKernels* g_kernels = nullptr;

// ---- streaming read bandwidth ----------------------------------------------------------------

struct StreamBuffer {
  std::vector<uint64_t> data;
  StreamBuffer() : data((size_t{512} << 20) / sizeof(uint64_t), 1) {}
};
StreamBuffer& stream_buffer() {
  static StreamBuffer b;
  return b;
}

uint64_t sum_range(const uint64_t* p, size_t n) {
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (size_t i = 0; i + 4 <= n; i += 4) s0 += p[i], s1 += p[i + 1], s2 += p[i + 2], s3 += p[i + 3];
  return s0 + s1 + s2 + s3;
}

// Reads the whole buffer once with `threads` threads; returns bytes per second.
double stream_once(tbb::task_arena& arena) {
  auto& buf = stream_buffer().data;
  const size_t chunk = (size_t{4} << 20) / sizeof(uint64_t);
  std::atomic<uint64_t> total{0};
  const auto start = std::chrono::steady_clock::now();
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, buf.size() / chunk), [&](const auto& r) {
      uint64_t s = 0;
      for (size_t c = r.begin(); c < r.end(); ++c) s += sum_range(buf.data() + c * chunk, chunk);
      total += s;
    });
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  benchmark::DoNotOptimize(total.load());
  return double(buf.size() * sizeof(uint64_t)) / seconds;
}

void BM_StreamRead(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  tbb::task_arena arena(threads);
  const size_t bytes = stream_buffer().data.size() * sizeof(uint64_t);
  for (auto _ : state) benchmark::DoNotOptimize(stream_once(arena));
  state.counters["GB/s"] = benchmark::Counter(double(bytes) / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

// ---- matrix cases ------------------------------------------------------------------------------

struct Shape {
  const char* name;
  uint32_t type;
  int64_t rows, n;
};
const Shape kShapes[] = {
    {"attn_q_896x896_Q5_0", GGML_TYPE_Q5_0, 896, 896},
    {"ffn_up_4864x896_Q5_0", GGML_TYPE_Q5_0, 4864, 896},
    {"ffn_down_896x4864_Q4_K", GGML_TYPE_Q4_K, 896, 4864},
    {"ffn_down_896x4864_Q6_K", GGML_TYPE_Q6_K, 896, 4864},
    {"attn_v_128x896_Q8_0", GGML_TYPE_Q8_0, 128, 896},
    {"lm_head_151936x896_Q8_0", GGML_TYPE_Q8_0, 151936, 896},
};

size_t row_bytes(uint32_t type, int64_t n) {
  const GgmlTypeInfo* info = ggml_type_info(type);
  return static_cast<size_t>(n / info->block_size * info->type_size);
}

// Copies of one quantized matrix (enough to leave the caches) and quantized activation rows.
struct Case {
  size_t w_row_bytes = 0, act_row_bytes = 0, matrix_bytes = 0;
  std::vector<std::vector<uint8_t>> copies;
  std::vector<std::vector<uint8_t>> packed_copies;  // same, in the plugin's packed layout, or none
  std::vector<uint8_t> act;  // [512][act_row_bytes]
};

const Case& case_for(const Shape& s) {
  static std::vector<std::unique_ptr<Case>> cache(std::size(kShapes));
  const size_t index = &s - kShapes;
  if (cache[index]) return *cache[index];
  auto c = std::make_unique<Case>();
  const uint32_t act_type = g_kernels->act_type[s.type];
  c->w_row_bytes = row_bytes(s.type, s.n);
  c->act_row_bytes = row_bytes(act_type, s.n);
  c->matrix_bytes = c->w_row_bytes * s.rows;
  std::mt19937 rng(42);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> row(s.n);
  std::vector<uint8_t> first(c->matrix_bytes);
  for (int64_t r = 0; r < s.rows; ++r) {
    for (auto& v : row) v = normal(rng);
    gguflow::quantize_row(s.type, row.data(), first.data() + r * c->w_row_bytes, s.n);
  }
  const size_t n_copies = std::max<size_t>(1, (kWorkingSetBytes + c->matrix_bytes - 1) / c->matrix_bytes);
  c->copies.assign(n_copies, first);
  if (g_kernels->pack_rows[s.type] > 0) {
    std::vector<uint8_t> packed(c->matrix_bytes);
    g_kernels->pack(s.type, first.data(), c->w_row_bytes, s.n, s.rows, packed.data());
    c->packed_copies.assign(n_copies, packed);
  }
  c->act.resize(512 * c->act_row_bytes);
  for (int a = 0; a < 512; ++a) {
    for (auto& v : row) v = normal(rng);
    g_kernels->quantize_act(act_type, row.data(), c->act.data() + a * c->act_row_bytes, s.n);
  }
  cache[index] = std::move(c);
  return *cache[index];
}

enum Mode { kDecode = 0, kPrefillBatched = 1, kPrefillOneAtATime = 2, kDecodePacked = 3, kPrefillPacked = 4 };

// args: shape index, mode, activation rows, threads
void BM_Matrix(benchmark::State& state) {
  const Shape& s = kShapes[state.range(0)];
  const Mode mode = static_cast<Mode>(state.range(1));
  const int64_t n_act = state.range(2);
  const int threads = static_cast<int>(state.range(3));
  const Case& c = case_for(s);
  const bool packed = mode == kDecodePacked || mode == kPrefillPacked;
  const auto& copies = packed ? c.packed_copies : c.copies;
  tbb::task_arena arena(threads);
  std::vector<float> y(n_act * s.rows);
  size_t copy = 0;
  const bool decode = mode == kDecode || mode == kDecodePacked;
  double stream_bytes_per_s = 0.0;
  if (decode)
    for (int rep = 0; rep < 3; ++rep) stream_bytes_per_s = std::max(stream_bytes_per_s, stream_once(arena));
  const int64_t row_unit = packed ? g_kernels->pack_rows[s.type] : 1;
  // Inside the arena for the whole loop, as a session step: entering it per product would add
  // a worker wake-up (5-20 us on a VM) to each one.
  arena.execute([&] {
    for (auto _ : state) {
      const uint8_t* w = copies[copy].data();
      copy = (copy + 1) % copies.size();
      gguflow::exec::parallel_row_units(s.rows, row_unit, [&](int64_t begin, int64_t end) {
        switch (mode) {
          case kDecodePacked:
            g_kernels->mat_vec_packed(s.type, w, c.w_row_bytes, s.n, begin, end, c.act.data(), y.data());
            break;
          case kPrefillPacked:
            g_kernels->mat_mat_packed(s.type, w, c.w_row_bytes, s.n, begin, end, c.act.data(),
                                      c.act_row_bytes, n_act, y.data(), s.rows);
            break;
          case kPrefillBatched:
            g_kernels->mat_mat(s.type, w, c.w_row_bytes, s.n, begin, end, c.act.data(), c.act_row_bytes,
                               n_act, y.data(), s.rows);
            break;
          case kDecode:
          case kPrefillOneAtATime:
            for (int64_t a = 0; a < n_act; ++a)
              g_kernels->mat_vec(s.type, w, c.w_row_bytes, s.n, begin, end,
                                 c.act.data() + a * c.act_row_bytes, y.data() + a * s.rows);
            break;
        }
      });
      benchmark::DoNotOptimize(y.data());
    }
  });
  const double bytes = double(c.matrix_bytes);
  state.counters["GB/s"] = benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * s.rows * s.n * n_act / 1e9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
  if (decode) {
    state.counters["stream"] = stream_bytes_per_s / 1e9;
    state.counters["of_bw"] = benchmark::Counter(bytes / stream_bytes_per_s,
                                                 benchmark::Counter::kIsIterationInvariantRate);
  }
}

void register_cases() {
  for (int threads : {1, 2})
    benchmark::RegisterBenchmark("stream_read", BM_StreamRead)->Arg(threads)->ArgName("threads")->UseRealTime();
  for (size_t i = 0; i < std::size(kShapes); ++i) {
    const std::string name = kShapes[i].name;
    const bool huge = kShapes[i].rows > 100000;
    // Packed cases only where the plugin packs this type, in whole groups of rows.
    const uint32_t group = g_kernels->pack_rows[kShapes[i].type];
    const bool packs = group > 0 && kShapes[i].rows % group == 0;
    for (int threads : {1, 2}) {
      benchmark::RegisterBenchmark((name + "/decode").c_str(), BM_Matrix)
          ->Args({int64_t(i), kDecode, 1, threads})->ArgNames({"", "", "", "threads"})->UseRealTime();
      if (packs)
        benchmark::RegisterBenchmark((name + "/decode_packed").c_str(), BM_Matrix)
            ->Args({int64_t(i), kDecodePacked, 1, threads})->ArgNames({"", "", "", "threads"})->UseRealTime();
      for (int64_t batch : {64, 512}) {
        if (huge) continue;  // the lm-head is applied to the last position only
        benchmark::RegisterBenchmark((name + "/prefill" + std::to_string(batch)).c_str(), BM_Matrix)
            ->Args({int64_t(i), kPrefillBatched, batch, threads})->ArgNames({"", "", "", "threads"})->UseRealTime();
        benchmark::RegisterBenchmark((name + "/prefill" + std::to_string(batch) + "_one_at_a_time").c_str(), BM_Matrix)
            ->Args({int64_t(i), kPrefillOneAtATime, batch, threads})->ArgNames({"", "", "", "threads"})->UseRealTime();
        if (packs)
          benchmark::RegisterBenchmark((name + "/prefill" + std::to_string(batch) + "_packed").c_str(), BM_Matrix)
              ->Args({int64_t(i), kPrefillPacked, batch, threads})->ArgNames({"", "", "", "threads"})->UseRealTime();
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto& selected = gguflow::plugins::select_kernels();
  g_kernels = selected.table;
  std::printf("kernels: %s\n", selected.describe().c_str());
  register_cases();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
