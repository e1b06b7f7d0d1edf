// `gguflow kv eval --sweep 0.8,0.9,...`: every way to shrink the KV cache on the same
// evaluation text, in one table and one plot, against the full f32 cache:
//   f32               the reference (decode.yaml, f32 cache)
//   f16, q8_0, q4_0   decode.yaml with K and V rows stored in that element type
//   low rank post-rope, low rank pre-rope
//                     at each energy threshold: a projection calibrated (one collection of
//                     the calibration text and one PCA per key position) and evaluated through
//                     decode-lowrank-kv.yaml / decode-lowrank-kv-prerope.yaml
//   zero (control)    decode.yaml with the cache cleared before every token
// Bytes are the session's allocation (Session::kv_cache_bytes), not a formula.
#pragma once

#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "runtime/lowrank/kv_calibrate.h"
#include "runtime/lowrank/kv_eval.h"

namespace gguflow::lowrank {

struct SweepOptions {
  std::vector<double> thresholds;             // energies of the low-rank rows, each in (0, 1]
  std::vector<ops::KvCacheType> cache_types;  // element-type rows (K and V alike)
  int64_t max_rank = 0;                       // cap on any rank (0: none)
  std::string work_dir;                       // receives the projection files, left for inspection
};

struct SweepRow {
  std::string method;    // "f32", "f16", "q8_0", "q4_0", "low rank post-rope", ..., "zero (control)"
  double threshold = 0;  // low rank: the energy threshold; else 0
  std::vector<std::vector<int64_t>> k_ranks, v_ranks;  // low rank: [n_layer][groups]; else empty
  CacheMetrics metrics;
  double ratio = 0;  // KV bytes per token / the f32 cache's (allocated)
};

struct SweepResult {
  std::string model;
  int64_t calibration_tokens = 0, eval_tokens = 0;
  Granularity granularity = Granularity::kLayer;
  std::vector<SweepRow> rows;  // f32 first, then types, low rank per key position, zero last
};

// Parses "0.8,0.9,0.95": each in (0, 1] (clear error otherwise).
std::vector<double> parse_thresholds(const std::string& list);
// "post-rope,pre-rope" (clear error otherwise).
std::vector<KeyPosition> parse_key_positions(const std::string& list);
// "f16,q8_0,q4_0": cache element types (clear error naming `option` otherwise).
std::vector<ops::KvCacheType> parse_cache_types(const std::string& list, const char* option);

// `calibrations`: one analysis per key position to sweep (collect_kv of the calibration text
// with those keys, one granularity); an empty list gives the element-type rows only.
SweepResult run_sweep(const StudyModel& m, std::span<const KvAnalysis> calibrations,
                      const std::string& calib_text_name, std::span<const int32_t> eval_tokens,
                      const SweepOptions& options);

void print_sweep_text(const SweepResult& r, FILE* out);  // a Markdown table
void print_sweep_json(const SweepResult& r, FILE* out);
// KL and 1 - top-1 agreement (log scales; errors under 1e-6 left out) against KV bytes per
// token: one line per method family.
void write_sweep_svg(const SweepResult& r, const std::string& path);

}  // namespace gguflow::lowrank
