// Tokenizer load time and encode throughput on the real Qwen2.5 vocabulary (151,936 tokens,
// 151,387 merges) and Llama's SentencePiece vocabulary. Data from $GGUFLOW_TEST_DATA, default
// ../shared/data next to the source tree.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/gguf/gguf_file.h"
#include "runtime/tokenizer/tokenizer.h"

namespace {

std::string data_path(const std::string& relative) {
  const char* env = std::getenv("GGUFLOW_TEST_DATA");
  return (std::filesystem::path(env && *env ? env : GGUFLOW_BENCH_DATA) / relative).string();
}

// All strings of a vocabulary's .inp file, joined: a mix of scripts, emoji, digits and spaces.
std::string sample_text() {
  std::ifstream in(data_path("vocab/ggml-vocab-qwen2.gguf.inp"), std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void BM_LoadVocabulary(benchmark::State& state, const char* file) {
  const std::string path = data_path(file);
  if (!std::filesystem::exists(path)) return state.SkipWithError("test data not found");
  for (auto _ : state) {
    const auto gguf = gguflow::GgufFile::open(path);
    benchmark::DoNotOptimize(gguflow::Tokenizer::from_gguf(*gguf));
  }
}

void BM_Encode(benchmark::State& state, const char* file) {
  const std::string path = data_path(file);
  if (!std::filesystem::exists(path)) return state.SkipWithError("test data not found");
  const auto tokenizer = gguflow::Tokenizer::from_gguf(*gguflow::GgufFile::open(path));
  const std::string text = sample_text();
  size_t tokens = 0;
  for (auto _ : state) tokens += tokenizer.encode(text, {.add_special = false}).size();
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(tokens),
                                                  benchmark::Counter::kIsRate);
}

BENCHMARK_CAPTURE(BM_LoadVocabulary, qwen2, "vocab/ggml-vocab-qwen2.gguf")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LoadVocabulary, llama_spm, "vocab/ggml-vocab-llama-spm.gguf")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Encode, qwen2, "vocab/ggml-vocab-qwen2.gguf")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Encode, llama_spm, "vocab/ggml-vocab-llama-spm.gguf")
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
