// Kernel plugin throughput on Qwen2.5-0.5B's matrix shapes (Google Benchmark).
//
//   build/bin/kernels_bench                        # the best plugin for this CPU
//   GGUFLOW_KERNELS=avx2 build/bin/kernels_bench   # a given plugin
//
// Cases: decode (mat_vec, one activation row), a server's decode step of 8 sequences (mat_mat
// with 8 rows) and prefill (mat_mat with 64 and 512 rows), and the same rows done one mat_vec at
// a time for comparison, on 1 and 2 threads. The output rows
// are split across the threads of a task_arena exactly as a session splits a matmul node
// (ops::parallel_row_units: a few ranges per thread, cut at packed-group multiples), and the
// timing loop runs inside the arena as a session step does. Where the plugin packs the shape's
// type (pack_rows > 0, ABI 2), decode_packed and prefill{64,512}_packed run mat_vec_packed /
// mat_mat_packed on packed copies, and prefill{64,512}_packed_one_at_a_time one mat_vec_packed
// per activation row.
//
// Weights live in DRAM as they do during inference (a model is far larger than the caches): each
// case cycles through enough copies of its matrix to fill 256 MiB (GGUFLOW_BENCH_WORKING_SET
// overrides, in bytes). Counters:
//   GB/s      weight bytes read per second
//   GFLOP/s   2 * rows * n * activation rows per second
// Decode cases also compare the kernel with this machine's streaming read bandwidth
// (runtime/bench/memory_bandwidth.h, the reader of `gguflow bench`). On a shared VM that
// bandwidth drifts by +-25 % over minutes, and the 2-thread figure of the 2-vCPU VM here flips
// between ~33 and ~55 GB/s within seconds, so one measurement before a case says little about
// the case. Instead the case runs in rounds: products until kRoundBytes of
// weights are read (timed), then one untimed streaming pass over the next kRoundBytes of a
// 512 MiB buffer with the same threads, so each ratio compares two measurements a few
// milliseconds apart:
//   of_bw     median over rounds of (round's weight GB/s) / (stream GB/s next to it)
//   of_bw_q1, of_bw_q3   its first and third quartiles (the spread)
//   stream    median stream GB/s of the rounds
//   rounds    the number of rounds
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <sys/mman.h>

#include <benchmark/benchmark.h>
#include <tbb/task_arena.h>

#include "runtime/bench/memory_bandwidth.h"
#include "ops/parallel.h"
#include "runtime/exec/tbb_parallel.h"
#include "bench/selected_kernels_main.h"
#include "runtime/plugins/kernel_plugins.h"
#include "runtime/quant/quant.h"

namespace {

// Bytes of weight copies each case cycles through: 256 MiB, or GGUFLOW_BENCH_WORKING_SET bytes
// (e.g. 1: one copy, to see the kernels' speed from the caches).
size_t working_set_bytes() {
  const char* env = std::getenv("GGUFLOW_BENCH_WORKING_SET");
  return env && *env ? std::strtoull(env, nullptr, 10) : size_t{256} << 20;
}

const GguflowKernels* g_kernels = nullptr;

// ---- streaming read bandwidth ----------------------------------------------------------------

gguflow::bench::StreamBuffer& stream_buffer() {
  static gguflow::bench::StreamBuffer b(size_t{512} << 20);
  return b;
}

void BM_StreamRead(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  tbb::task_arena arena(threads);
  const size_t bytes = stream_buffer().bytes();
  for (auto _ : state) benchmark::DoNotOptimize(stream_buffer().read_all(arena));
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

// Bytes in 2 MiB-aligned memory with transparent huge pages advised, as a session stores its
// packed weights (runtime/exec/packed_weights.cc): with 4 KiB pages a matrix streamed from DRAM
// also pays a TLB miss per page, which the session does not.
class HugePageBytes {
 public:
  void resize(size_t bytes) {
    constexpr size_t kAlign = size_t{2} << 20;
    const size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
    data_.reset(static_cast<uint8_t*>(std::aligned_alloc(kAlign, rounded)));
    if (!data_) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    ::madvise(data_.get(), rounded, MADV_HUGEPAGE);
#endif
  }
  uint8_t* data() const { return data_.get(); }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> data_;
};

// Copies of one quantized matrix (enough to leave the caches) and quantized activation rows.
struct Case {
  size_t w_row_bytes = 0, act_row_bytes = 0, matrix_bytes = 0;
  std::vector<HugePageBytes> copies;
  std::vector<HugePageBytes> packed_copies;  // same, in the plugin's packed layout, or none
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
  // Copies must differ page by page: identical copies may share physical pages (a host's
  // same-page merging), and the case would then read one copy from the caches. Each copy's
  // rows are drawn at random from a pool of distinct quantized rows, so no two 4 KiB pages
  // repeat (a page would need the same run of ~1.5-6 rows at the same offset).
  const int64_t pool_rows = std::min<int64_t>(4096, s.rows * 64);
  std::vector<uint8_t> pool(pool_rows * c->w_row_bytes);
  for (int64_t r = 0; r < pool_rows; ++r) {
    for (auto& v : row) v = normal(rng);
    gguflow::quantize_row(s.type, row.data(), pool.data() + r * c->w_row_bytes, s.n);
  }
  const size_t n_copies = std::max<size_t>(1, (working_set_bytes() + c->matrix_bytes - 1) / c->matrix_bytes);
  std::uniform_int_distribution<int64_t> pick(0, pool_rows - 1);
  c->copies.resize(n_copies);
  for (auto& copy : c->copies) {
    copy.resize(c->matrix_bytes);
    for (int64_t r = 0; r < s.rows; ++r)
      std::memcpy(copy.data() + r * c->w_row_bytes, pool.data() + pick(rng) * c->w_row_bytes, c->w_row_bytes);
  }
  if (g_kernels->pack_rows[s.type] > 0) {
    c->packed_copies.resize(n_copies);
    for (size_t k = 0; k < n_copies; ++k) {
      c->packed_copies[k].resize(c->matrix_bytes);
      g_kernels->pack(s.type, c->copies[k].data(), c->w_row_bytes, s.n, s.rows, c->packed_copies[k].data());
    }
  }
  c->act.resize(512 * c->act_row_bytes);
  for (int a = 0; a < 512; ++a) {
    for (auto& v : row) v = normal(rng);
    g_kernels->quantize_act(act_type, row.data(), c->act.data() + a * c->act_row_bytes, s.n);
  }
  cache[index] = std::move(c);
  return *cache[index];
}

// Weight bytes per round of a decode case (and stream bytes per comparison pass): ~2 ms each
// at this machine's bandwidth, short enough that both sides of a ratio see the same host state.
constexpr size_t kRoundBytes = size_t{64} << 20;

// The rounds of one decode case: each round's kernel and stream rates (bytes per second).
struct RoundStats {
  std::vector<double> ratio, stream;
  void add(double kernel_rate, double stream_rate) {
    ratio.push_back(kernel_rate / stream_rate);
    stream.push_back(stream_rate);
  }
  // q-quantile of v (nearest rank), v non-empty.
  static double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(q * double(v.size() - 1) + 0.5)];
  }
  void report(benchmark::State& state) const {
    state.counters["rounds"] = double(ratio.size());
    // Google Benchmark's short calibration runs end before a round does; the reported run
    // (--benchmark_min_time) has many.
    if (ratio.empty()) return;
    state.counters["of_bw"] = quantile(ratio, 0.5);
    state.counters["of_bw_q1"] = quantile(ratio, 0.25);
    state.counters["of_bw_q3"] = quantile(ratio, 0.75);
    state.counters["stream"] = quantile(stream, 0.5) / 1e9;
  }
};

enum Mode {
  kDecode = 0,
  kPrefillBatched = 1,
  kPrefillOneAtATime = 2,
  kDecodePacked = 3,
  kPrefillPacked = 4,
  kPrefillPackedOneAtATime = 5
};

// args: shape index, mode, activation rows, threads
void BM_Matrix(benchmark::State& state) {
  const Shape& s = kShapes[state.range(0)];
  const Mode mode = static_cast<Mode>(state.range(1));
  const int64_t n_act = state.range(2);
  const int threads = static_cast<int>(state.range(3));
  const Case& c = case_for(s);
  const bool packed = mode == kDecodePacked || mode == kPrefillPacked || mode == kPrefillPackedOneAtATime;
  const auto& copies = packed ? c.packed_copies : c.copies;
  tbb::task_arena arena(threads);
  std::vector<float> y(n_act * s.rows);
  size_t copy = 0;
  const bool decode = mode == kDecode || mode == kDecodePacked;
  const int64_t row_unit = packed ? g_kernels->pack_rows[s.type] : 1;
  const auto product = [&] {
    const uint8_t* w = copies[copy].data();
    copy = (copy + 1) % copies.size();
    gguflow::ops::parallel_row_units(gguflow::exec::tbb_parallel(), s.rows, row_unit, c.w_row_bytes, n_act, [&](int64_t begin, int64_t end) {
      switch (mode) {
        case kDecodePacked:
          g_kernels->mat_vec_packed(s.type, w, c.w_row_bytes, s.n, begin, end, c.act.data(), y.data());
          break;
        case kPrefillPacked:
          g_kernels->mat_mat_packed(s.type, w, c.w_row_bytes, s.n, begin, end, c.act.data(),
                                    c.act_row_bytes, n_act, y.data(), s.rows);
          break;
        case kPrefillPackedOneAtATime:
          for (int64_t a = 0; a < n_act; ++a)
            g_kernels->mat_vec_packed(s.type, w, c.w_row_bytes, s.n, begin, end, c.act.data() + a * c.act_row_bytes,
                                      y.data() + a * s.rows);
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
  };
  RoundStats rounds;
  // Inside the arena for the whole loop, as a session step: entering it per product would add
  // a worker wake-up (5-20 us on a VM) to each one.
  arena.execute([&] {
    if (!decode) {
      for (auto _ : state) product();
      return;
    }
    size_t round_bytes = 0, stream_offset = 0;
    auto round_start = std::chrono::steady_clock::now();
    for (auto _ : state) {
      product();
      round_bytes += c.matrix_bytes;
      if (round_bytes < kRoundBytes) continue;
      const double kernel_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - round_start).count();
      state.PauseTiming();
      const double stream = stream_buffer().read(arena, stream_offset, kRoundBytes);
      stream_offset += kRoundBytes;
      rounds.add(double(round_bytes) / kernel_s, stream);
      state.ResumeTiming();
      round_bytes = 0;
      round_start = std::chrono::steady_clock::now();
    }
  });
  const double bytes = double(c.matrix_bytes);
  state.counters["GB/s"] = benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * s.rows * s.n * n_act / 1e9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
  if (decode) rounds.report(state);
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
      // 8: one decode step of 8 sequences (a server's continuous batching, issue 18); 64, 512:
      // prefill. The lm-head is applied to the last position of a prompt only.
      for (int64_t batch : {8, 64, 512}) {
        if (huge && batch > 8) continue;
        benchmark::RegisterBenchmark((name + "/prefill" + std::to_string(batch)).c_str(), BM_Matrix)
            ->Args({int64_t(i), kPrefillBatched, batch, threads})->ArgNames({"", "", "", "threads"})->UseRealTime();
        benchmark::RegisterBenchmark((name + "/prefill" + std::to_string(batch) + "_one_at_a_time").c_str(), BM_Matrix)
            ->Args({int64_t(i), kPrefillOneAtATime, batch, threads})->ArgNames({"", "", "", "threads"})->UseRealTime();
        if (packs) {
          benchmark::RegisterBenchmark((name + "/prefill" + std::to_string(batch) + "_packed").c_str(), BM_Matrix)
              ->Args({int64_t(i), kPrefillPacked, batch, threads})->ArgNames({"", "", "", "threads"})->UseRealTime();
          benchmark::RegisterBenchmark((name + "/prefill" + std::to_string(batch) + "_packed_one_at_a_time").c_str(), BM_Matrix)
              ->Args({int64_t(i), kPrefillPackedOneAtATime, batch, threads})->ArgNames({"", "", "", "threads"})->UseRealTime();
        }
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  return gguflow::bench::run_with_selected_kernels(argc, argv, &g_kernels, register_cases);
}
