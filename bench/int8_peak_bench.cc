// The int8 multiply-accumulate peak of this CPU, per instruction sequence the x86 kernel plugins
// use for their integer dots (issue 19: "the fraction of the machine's int8 peak that prefill
// reaches, per plugin"):
//   avx2, avx3:  vpmaddubsw + vpmaddwd (by ones) + vpaddd on 256-bit registers: 32 u8 x s8
//                products per sequence (kernels_internal.h's DotU8I8 / AccumulateDot);
//   avx3_dl, avx3_vnni: vpdpbusd on 256-bit registers (decode) and on 512-bit registers (the prefill
//                group pairs of kernels_packed.cc): 32 and 64 products per instruction.
// Each benchmark runs kChains independent accumulator chains (enough to cover the instructions'
// latency with their throughput on current cores) over operands held in registers: no memory
// traffic, the pure issue rate. Items per second = int8 multiply-accumulates per second on one
// thread; multiply by the threads a run uses (one per core, no SMT here) for the machine's peak.
// A sequence this CPU lacks is reported as skipped.
//
//   build/bin/int8_peak_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <immintrin.h>

#include <cstdint>

#include <benchmark/benchmark.h>

namespace {

constexpr int kChains = 12;     // independent accumulators (registers) per loop iteration
constexpr int kInner = 256;     // iterations between the benchmark loop's bookkeeping

__attribute__((target("avx2"))) void AvxMaddubs256(benchmark::State& state) {
  if (!__builtin_cpu_supports("avx2")) {
    state.SkipWithError("this CPU has no AVX2");
    return;
  }
  const __m256i u = _mm256_set1_epi8(3), ones = _mm256_set1_epi16(1);
  __m256i s = _mm256_set1_epi8(-5);
  __m256i acc[kChains];
  for (auto& a : acc) a = _mm256_setzero_si256();
  for (auto _ : state) {
    for (int i = 0; i < kInner; ++i) {
      for (auto& a : acc) a = _mm256_add_epi32(a, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), ones));
      // Keep s opaque so the products are not hoisted out of the loop.
      asm volatile("" : "+x"(s));
    }
  }
  __m256i sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm256_add_epi32(sum, acc[c]);
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations() * kInner * kChains * 32);
}

__attribute__((target("avx512f,avx512vl,avx512vnni"))) void VnniDpbusd256(benchmark::State& state) {
  if (!__builtin_cpu_supports("avx512vnni") || !__builtin_cpu_supports("avx512vl")) {
    state.SkipWithError("this CPU has no AVX-512 VNNI");
    return;
  }
  const __m256i u = _mm256_set1_epi8(3);
  __m256i s = _mm256_set1_epi8(-5);
  __m256i acc[kChains];
  for (auto& a : acc) a = _mm256_setzero_si256();
  for (auto _ : state) {
    for (int i = 0; i < kInner; ++i) {
      for (auto& a : acc) a = _mm256_dpbusd_epi32(a, u, s);
      asm volatile("" : "+v"(s));
    }
  }
  __m256i sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm256_add_epi32(sum, acc[c]);
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations() * kInner * kChains * 32);
}

__attribute__((target("avx512f,avx512vnni"))) void VnniDpbusd512(benchmark::State& state) {
  if (!__builtin_cpu_supports("avx512vnni")) {
    state.SkipWithError("this CPU has no AVX-512 VNNI");
    return;
  }
  const __m512i u = _mm512_set1_epi8(3);
  __m512i s = _mm512_set1_epi8(-5);
  __m512i acc[kChains];
  for (auto& a : acc) a = _mm512_setzero_si512();
  for (auto _ : state) {
    for (int i = 0; i < kInner; ++i) {
      for (auto& a : acc) a = _mm512_dpbusd_epi32(a, u, s);
      asm volatile("" : "+v"(s));
    }
  }
  __m512i sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_epi32(sum, acc[c]);
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations() * kInner * kChains * 64);
}

BENCHMARK(AvxMaddubs256)->Name("int8_macs/avx2_maddubs_madd_add_256");
BENCHMARK(VnniDpbusd256)->Name("int8_macs/avx512vnni_dpbusd_256");
BENCHMARK(VnniDpbusd512)->Name("int8_macs/avx512vnni_dpbusd_512");

}  // namespace

BENCHMARK_MAIN();
