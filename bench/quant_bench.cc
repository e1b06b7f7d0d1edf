// Throughput of the scalar reference codecs (runtime/quant) per type, and of `synth` writing
// a small Qwen2-shaped model. These are the reference paths (tools, tests), not the kernels.
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "plugins/abi/ggml_type.h"
#include "runtime/quant/quant.h"
#include "runtime/tools/synth.h"

namespace {

constexpr int64_t kRow = 4096;  // elements per row (a multiple of every block size)

std::vector<float> random_row() {
  std::mt19937 rng(42);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> row(kRow);
  for (float& x : row) x = normal(rng);
  return row;
}

void BM_QuantizeRow(benchmark::State& state) {
  const auto type = static_cast<uint32_t>(state.range(0));
  const std::vector<float> row = random_row();
  std::vector<uint8_t> out(kRow * 4);
  for (auto _ : state) {
    benchmark::DoNotOptimize(gguflow::quantize_row(type, row.data(), out.data(), kRow));
  }
  state.SetItemsProcessed(state.iterations() * kRow);
  state.SetLabel(ggml_type_info(type)->name);
}

void BM_DequantizeRow(benchmark::State& state) {
  const auto type = static_cast<uint32_t>(state.range(0));
  const std::vector<float> row = random_row();
  std::vector<uint8_t> encoded(kRow * 4);
  gguflow::quantize_row(type, row.data(), encoded.data(), kRow);
  std::vector<float> out(kRow);
  for (auto _ : state) {
    gguflow::dequantize_row(type, encoded.data(), out.data(), kRow);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * kRow);
  state.SetLabel(ggml_type_info(type)->name);
}

void all_types(benchmark::internal::Benchmark* b) {
  for (int t : {GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0,
                GGML_TYPE_Q5_1, GGML_TYPE_Q8_0, GGML_TYPE_Q8_1, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K,
                GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_Q8_K})
    b->Arg(t);
}
BENCHMARK(BM_QuantizeRow)->Apply(all_types);
BENCHMARK(BM_DequantizeRow)->Apply(all_types);

// synth of a 2-layer, Qwen2.5-0.5B-wide model (Q4_K_M mix); items = weights generated.
void BM_SynthSmallQwen2(benchmark::State& state) {
  gguflow::SynthOptions options;
  options.shape = gguflow::SynthShape{"qwen2", 896, 2, 14, 2, 4864, 8192, 4096, 1e6, 1e-6, true, true};
  options.file_type = "Q4_K_M";
  options.output = (std::filesystem::temp_directory_path() / "gguflow-quant-bench.gguf").string();
  uint64_t weights = 0;
  for (auto _ : state) {
    gguflow::SynthReport report = gguflow::synth_model(options);
    weights = 0;
    for (const auto& t : report.tensors) {
      uint64_t n = 1;
      for (uint64_t d : t.dims) n *= d;
      weights += n;
    }
  }
  std::filesystem::remove(options.output);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * weights));
}
BENCHMARK(BM_SynthSmallQwen2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
