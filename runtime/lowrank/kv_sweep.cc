#include "runtime/lowrank/kv_sweep.h"

#include <cstdlib>
#include <filesystem>

#include "ops/error.h"
#include "runtime/lowrank/svg_plot.h"

namespace gguflow::lowrank {
namespace {

std::string rank_list(const std::vector<std::vector<int64_t>>& ranks) {
  std::string s;
  for (size_t l = 0; l < ranks.size(); ++l) {
    s += l ? " " : "";
    for (size_t g = 0; g < ranks[l].size(); ++g) s += (g ? "/" : "") + std::to_string(ranks[l][g]);
  }
  return s;
}

std::vector<std::vector<int64_t>> ranks_of(const std::vector<LayerBasis>& set) {
  std::vector<std::vector<int64_t>> r;
  for (const LayerBasis& b : set) r.push_back(b.ranks);
  return r;
}

}  // namespace

std::vector<double> parse_thresholds(const std::string& list) {
  std::vector<double> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(',', start), list.size());
    const std::string word = list.substr(start, end - start);
    char* stop = nullptr;
    const double v = std::strtod(word.c_str(), &stop);
    if (word.empty() || *stop != '\0' || !(v > 0.0 && v <= 1.0))
      throw error("--sweep: expected comma-separated thresholds in (0, 1], found '", word, "' in '", list, "'");
    out.push_back(v);
    start = end + 1;
  }
  return out;
}

SweepResult run_sweep(const StudyModel& m, const KvAnalysis& calibration, const std::string& calib_text_name,
                      std::span<const int32_t> eval_tokens, const std::vector<double>& thresholds,
                      int64_t max_rank, const std::string& work_dir) {
  SweepResult r;
  r.model = std::filesystem::path(m.path).filename().string();
  r.calibration_tokens = calibration.tokens;
  r.eval_tokens = static_cast<int64_t>(eval_tokens.size());
  r.granularity = calibration.granularity;
  const CacheRun full = run_full(m, eval_tokens);
  r.full = compare(full, full, eval_tokens);
  r.zero = compare(full, run_zero(m, eval_tokens), eval_tokens);
  std::filesystem::create_directories(work_dir);
  for (double t : thresholds) {
    CalibrateOptions o;
    o.energy = t;
    o.max_rank = max_rank;
    o.text_name = calib_text_name;
    const KvProjection p = make_projection(calibration, o, m);
    char name[64];
    std::snprintf(name, sizeof name, "energy-%.4g.kvproj.gguf", t);
    const std::string path = (std::filesystem::path(work_dir) / name).string();
    write_kv_projection(p, path);
    SweepRow row;
    row.threshold = t;
    row.k_ranks = ranks_of(p.k);
    row.v_ranks = ranks_of(p.v);
    row.metrics = compare(full, run_projected(m, path, eval_tokens), eval_tokens);
    row.ratio = row.metrics.kv_bytes_per_token / r.full.kv_bytes_per_token;
    r.rows.push_back(std::move(row));
  }
  return r;
}

void print_sweep_text(const SweepResult& r, FILE* out) {
  std::fprintf(out, "model %s, granularity %s, calibration %lld tokens, evaluation %lld tokens\n\n", r.model.c_str(),
               granularity_name(r.granularity), static_cast<long long>(r.calibration_tokens),
               static_cast<long long>(r.eval_tokens));
  std::fprintf(out, "| cache | K ranks per layer | V ranks per layer | KV bytes/token | ratio | KL(full‖x) | top-1 | perplexity | logit rel L2 |\n");
  std::fprintf(out, "|---|---|---|---:|---:|---:|---:|---:|---:|\n");
  auto line = [&](const std::string& name, const std::string& k, const std::string& v, const CacheMetrics& m,
                  double ratio) {
    std::fprintf(out, "| %s | %s | %s | %.0f | %.3f | %.5f | %.4f | %.3f | %.4g |\n", name.c_str(), k.c_str(), v.c_str(),
                 m.kv_bytes_per_token, ratio, m.kld_mean, m.top1_agreement, m.perplexity, m.logit_rel_l2);
  };
  line("full", "full", "full", r.full, 1.0);
  for (const SweepRow& row : r.rows) {
    char name[32];
    std::snprintf(name, sizeof name, "energy %.4g", row.threshold);
    line(name, rank_list(row.k_ranks), rank_list(row.v_ranks), row.metrics, row.ratio);
  }
  line("zero (control)", "0", "0", r.zero, 0.0);
}

void print_sweep_json(const SweepResult& r, FILE* out) {
  auto metrics = [&](const CacheMetrics& m) {
    std::fprintf(out,
                 "{\"kld_mean\": %.9g, \"top1_agreement\": %.6f, \"perplexity\": %.6f, \"logit_rel_l2\": %.9g, "
                 "\"kv_bytes_per_token\": %.1f}",
                 m.kld_mean, m.top1_agreement, m.perplexity, m.logit_rel_l2, m.kv_bytes_per_token);
  };
  std::fprintf(out, "{\"model\": \"%s\", \"granularity\": \"%s\", \"calibration_tokens\": %lld, \"tokens\": %lld,\n",
               r.model.c_str(), granularity_name(r.granularity), static_cast<long long>(r.calibration_tokens),
               static_cast<long long>(r.eval_tokens));
  std::fprintf(out, " \"full\": ");
  metrics(r.full);
  std::fprintf(out, ",\n \"zero\": ");
  metrics(r.zero);
  std::fprintf(out, ",\n \"sweep\": [\n");
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const SweepRow& row = r.rows[i];
    std::fprintf(out, "  {\"threshold\": %.6g, \"k_ranks\": \"%s\", \"v_ranks\": \"%s\", \"ratio\": %.6f, \"projected\": ",
                 row.threshold, rank_list(row.k_ranks).c_str(), rank_list(row.v_ranks).c_str(), row.ratio);
    metrics(row.metrics);
    std::fprintf(out, "}%s\n", i + 1 < r.rows.size() ? "," : "");
  }
  std::fprintf(out, "]}\n");
}

void write_sweep_svg(const SweepResult& r, const std::string& path) {
  std::vector<PlotPanel> panels(2);
  panels[0].title = "KL(full || projected)";
  panels[0].y_label = "mean KL divergence (nats)";
  panels[1].title = "top-1 disagreement";
  panels[1].y_label = "1 - top-1 agreement";
  for (int i = 0; i < 2; ++i) {
    panels[i].x_label = "KV bytes per token";
    panels[i].x_min = 0;
    panels[i].x_max = r.full.kv_bytes_per_token;
    PlotSeries s{"energy sweep", {}};
    for (const SweepRow& row : r.rows)
      s.points.emplace_back(row.metrics.kv_bytes_per_token,
                            i == 0 ? row.metrics.kld_mean : 1.0 - row.metrics.top1_agreement);
    s.points.emplace_back(r.full.kv_bytes_per_token, 0.0);
    panels[i].series.push_back(std::move(s));
  }
  write_svg(path, "Low-rank KV: error vs memory, " + r.model, panels);
}

}  // namespace gguflow::lowrank
