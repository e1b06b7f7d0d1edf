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

// What the other instructions of a packed product cost beside 512-bit vpdpbusd: per 8
// vpdpbusd (8 chains), `Extra` independent instructions of one kind, each on a register of its
// own (one instruction a register per iteration: no latency chain of their own). Items are the
// vpdpbusd multiply-accumulates, so the drop from int8_macs/avx512vnni_dpbusd_512 is the cost.
// On the Zen 4 VM (2026-12-06): vpandd and vpsrlw free at 8 per 8, vcvtdq2ps free at 2 per 8,
// vinserti64x4 ~2 %; vfmadd231ps, vmulps and vpmulld take a whole vpdpbusd slot each (235 ->
// 188 G/s at 2 per 8). So the block-32 products' float scaling, a multiply and a fused add per
// activation row and 32 elements (16 per 64 vpdpbusd), caps them at 80 % of the peak, and Q6_K's
// group scales (8 vpmulld per 32 vpdpbusd) at 80 % too.
enum class ExtraKind { kAnd, kShift, kFma, kMul, kConvert, kMullo, kInsert };

// GCC 12 warns that the intrinsics' own _mm512_undefined sources may be used uninitialized.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

template <ExtraKind Kind, int Extra>
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vnni"))) void VnniDpbusd512With(benchmark::State& state) {
  if (!__builtin_cpu_supports("avx512vnni") || !__builtin_cpu_supports("avx512bw") ||
      !__builtin_cpu_supports("avx512dq")) {
    state.SkipWithError("this CPU has no AVX-512 VNNI");
    return;
  }
  constexpr int kDots = 8;
  const __m512i u = _mm512_set1_epi8(3), mask = _mm512_set1_epi8(0x1F);
  const __m512 half = _mm512_set1_ps(0.5f);
  __m512i s = _mm512_set1_epi8(-5);
  __m512i acc[kDots], x[8];
  __m512 f[8];
  for (auto& a : acc) a = _mm512_setzero_si512();
  for (int i = 0; i < 8; ++i) x[i] = _mm512_set1_epi32(i + 1), f[i] = _mm512_set1_ps(1.0f + static_cast<float>(i));
  for (auto _ : state) {
    for (int it = 0; it < kInner; ++it) {
#pragma GCC unroll 8
      for (int i = 0; i < kDots; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], u, s);
#pragma GCC unroll 8
      for (int j = 0; j < Extra; ++j) {
        if constexpr (Kind == ExtraKind::kAnd) x[j] = _mm512_and_si512(x[j], mask);
        if constexpr (Kind == ExtraKind::kShift) x[j] = _mm512_srli_epi16(x[j], 1);
        if constexpr (Kind == ExtraKind::kFma) f[j] = _mm512_fmadd_ps(f[j], half, half);
        if constexpr (Kind == ExtraKind::kMul) f[j] = _mm512_mul_ps(f[j], half);
        if constexpr (Kind == ExtraKind::kConvert) f[j] = _mm512_cvtepi32_ps(_mm512_castps_si512(f[j]));
        if constexpr (Kind == ExtraKind::kMullo) x[j] = _mm512_mullo_epi32(x[j], mask);
        if constexpr (Kind == ExtraKind::kInsert) x[j] = _mm512_inserti64x4(x[j], _mm512_castsi512_si256(x[(j + 1) % 8]), 1);
      }
      asm volatile("" : "+v"(s));
    }
  }
  __m512i sum = acc[0];
  for (int c = 1; c < kDots; ++c) sum = _mm512_add_epi32(sum, acc[c]);
  for (int i = 0; i < 8; ++i) sum = _mm512_add_epi32(sum, _mm512_add_epi32(x[i], _mm512_castps_si512(f[i])));
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations() * kInner * kDots * 64);
}
#pragma GCC diagnostic pop

BENCHMARK(AvxMaddubs256)->Name("int8_macs/avx2_maddubs_madd_add_256");
BENCHMARK(VnniDpbusd256)->Name("int8_macs/avx512vnni_dpbusd_256");
BENCHMARK(VnniDpbusd512)->Name("int8_macs/avx512vnni_dpbusd_512");
BENCHMARK(VnniDpbusd512With<ExtraKind::kAnd, 8>)->Name("int8_macs/dpbusd_512_per_8/8_vpandd");
BENCHMARK(VnniDpbusd512With<ExtraKind::kShift, 4>)->Name("int8_macs/dpbusd_512_per_8/4_vpsrlw");
BENCHMARK(VnniDpbusd512With<ExtraKind::kShift, 8>)->Name("int8_macs/dpbusd_512_per_8/8_vpsrlw");
BENCHMARK(VnniDpbusd512With<ExtraKind::kFma, 2>)->Name("int8_macs/dpbusd_512_per_8/2_vfmadd231ps");
BENCHMARK(VnniDpbusd512With<ExtraKind::kMul, 2>)->Name("int8_macs/dpbusd_512_per_8/2_vmulps");
BENCHMARK(VnniDpbusd512With<ExtraKind::kConvert, 2>)->Name("int8_macs/dpbusd_512_per_8/2_vcvtdq2ps");
BENCHMARK(VnniDpbusd512With<ExtraKind::kMullo, 2>)->Name("int8_macs/dpbusd_512_per_8/2_vpmulld");
BENCHMARK(VnniDpbusd512With<ExtraKind::kInsert, 2>)->Name("int8_macs/dpbusd_512_per_8/2_vinserti64x4");

}  // namespace

BENCHMARK_MAIN();
