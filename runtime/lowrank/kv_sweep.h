// `gguflow kv eval --sweep 0.8,0.9,...`: calibrate at several energy thresholds (one collection
// of the calibration text, one PCA) and evaluate each projection on the evaluation text, next
// to the full cache and the zeroed-cache control. One table; optionally an SVG of error vs
// memory.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "runtime/lowrank/kv_calibrate.h"
#include "runtime/lowrank/kv_eval.h"

namespace gguflow::lowrank {

struct SweepRow {
  double threshold = 0;
  std::vector<std::vector<int64_t>> k_ranks, v_ranks;  // [n_layer][groups]
  CacheMetrics metrics;
  double ratio = 0;  // projected / full KV bytes per token (allocated)
};

struct SweepResult {
  std::string model;
  int64_t calibration_tokens = 0, eval_tokens = 0;
  Granularity granularity = Granularity::kLayer;
  CacheMetrics full, zero;
  std::vector<SweepRow> rows;
};

// Parses "0.8,0.9,0.95": each in (0, 1] (clear error otherwise).
std::vector<double> parse_thresholds(const std::string& list);

// `work_dir` receives the projection files (named by threshold); they are left for inspection.
SweepResult run_sweep(const StudyModel& m, const KvAnalysis& calibration, const std::string& calib_text_name,
                      std::span<const int32_t> eval_tokens, const std::vector<double>& thresholds,
                      int64_t max_rank, const std::string& work_dir);

void print_sweep_text(const SweepResult& r, FILE* out);   // a Markdown table
void print_sweep_json(const SweepResult& r, FILE* out);
// KL and 1 - top-1 agreement against KV bytes per token, one point per threshold.
void write_sweep_svg(const SweepResult& r, const std::string& path);

}  // namespace gguflow::lowrank
