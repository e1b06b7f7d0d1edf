#include "runtime/lowrank/kv_sweep.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "ops/error.h"
#include "runtime/core/json.h"
#include "runtime/lowrank/svg_plot.h"

namespace gguflow::lowrank {
namespace {

// The words of a comma-separated list ("a,b" -> a, b; an empty word stays, for its error).
std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> words;
  for (size_t start = 0; start <= list.size();) {
    const size_t end = std::min(list.find(',', start), list.size());
    words.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

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

std::string low_rank_method(KeyPosition k) { return std::string("low rank ") + key_position_name(k); }

std::string setting(const SweepRow& row) {
  if (row.threshold <= 0) return "";
  char s[32];
  std::snprintf(s, sizeof s, "energy %.4g", row.threshold);
  return s;
}

}  // namespace

std::vector<double> parse_thresholds(const std::string& list) {
  std::vector<double> out;
  for (const std::string& word : split_list(list)) {
    char* stop = nullptr;
    const double v = std::strtod(word.c_str(), &stop);
    if (word.empty() || *stop != '\0' || !(v > 0.0 && v <= 1.0))
      throw error("--sweep: expected comma-separated thresholds in (0, 1], found '", word, "' in '", list, "'");
    out.push_back(v);
  }
  return out;
}

std::vector<KeyPosition> parse_key_positions(const std::string& list) {
  std::vector<KeyPosition> out;
  for (const std::string& word : split_list(list)) out.push_back(parse_key_position(word));
  return out;
}

std::vector<ops::KvCacheType> parse_cache_types(const std::string& list, const char* option) {
  std::vector<ops::KvCacheType> out;
  for (const std::string& word : split_list(list)) {
    const auto type = ops::find_kv_cache_type(word);
    if (!type)
      throw error(option, ": expected a comma-separated list of ", ops::kv_cache_type_names(), ", found '", word,
                  "' in '", list, "'");
    out.push_back(*type);
  }
  return out;
}

SweepResult run_sweep(const StudyModel& m, std::span<const KvAnalysis> calibrations,
                      const std::string& calib_text_name, std::span<const int32_t> eval_tokens,
                      const SweepOptions& options) {
  SweepResult r;
  r.model = std::filesystem::path(m.path).filename().string();
  r.eval_tokens = static_cast<int64_t>(eval_tokens.size());
  if (!calibrations.empty()) {
    r.calibration_tokens = calibrations[0].tokens;
    r.granularity = calibrations[0].granularity;
  }
  const CacheRun full = run_full(m, eval_tokens);
  auto add = [&](std::string method, const CacheRun& run) -> SweepRow& {
    SweepRow& row = r.rows.emplace_back();
    row.method = std::move(method);
    row.metrics = compare(full, run, eval_tokens);
    row.ratio = row.metrics.kv_bytes_per_token / r.rows[0].metrics.kv_bytes_per_token;
    return row;
  };
  add("f32", full);
  for (ops::KvCacheType t : options.cache_types) add(ops::kv_cache_type_name(t), run_full(m, eval_tokens, {t, t}));
  if (!calibrations.empty()) std::filesystem::create_directories(options.work_dir);
  for (const KvAnalysis& a : calibrations)
    for (double t : options.thresholds) {
      CalibrateOptions o;
      o.energy = t;
      o.max_rank = options.max_rank;
      o.text_name = calib_text_name;
      const KvProjection p = make_projection(a, o, m);
      char name[96];
      std::snprintf(name, sizeof name, "%s-energy-%.4g.kvproj.gguf", key_position_name(a.keys), t);
      const std::string path = (std::filesystem::path(options.work_dir) / name).string();
      write_kv_projection(p, path);
      SweepRow& row = add(low_rank_method(a.keys), run_projected(m, path, eval_tokens));
      row.threshold = t;
      row.k_ranks = ranks_of(p.k);
      row.v_ranks = ranks_of(p.v);
    }
  add("zero (control)", run_zero(m, eval_tokens));
  return r;
}

void print_sweep_text(const SweepResult& r, FILE* out) {
  std::fprintf(out, "model %s, granularity %s, calibration %lld tokens, evaluation %lld tokens\n\n", r.model.c_str(),
               granularity_name(r.granularity), static_cast<long long>(r.calibration_tokens),
               static_cast<long long>(r.eval_tokens));
  std::fprintf(out, "| cache | setting | K ranks per layer | V ranks per layer | KV bytes/token | of f32 | "
                    "KL(f32‖x) | top-1 | perplexity | logit rel L2 | tokens/s |\n");
  std::fprintf(out, "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const SweepRow& row : r.rows) {
    const CacheMetrics& m = row.metrics;
    std::fprintf(out, "| %s | %s | %s | %s | %.1f | %.3f | %.6f | %.4f | %.3f | %.4g | %.0f |\n", row.method.c_str(),
                 setting(row).c_str(), rank_list(row.k_ranks).c_str(), rank_list(row.v_ranks).c_str(),
                 m.kv_bytes_per_token, row.ratio, m.kld_mean, m.top1_agreement, m.perplexity, m.logit_rel_l2,
                 m.tokens_per_second);
  }
}

void print_sweep_json(const SweepResult& r, FILE* out) {
  Json rows = Json::array();
  for (const SweepRow& row : r.rows) {
    Json j = {{"method", row.method}, {"threshold", row.threshold}, {"k_ranks", rank_list(row.k_ranks)},
              {"v_ranks", rank_list(row.v_ranks)}, {"ratio", row.ratio}};
    j.update(metrics_json(row.metrics));
    j["tokens_per_second"] = row.metrics.tokens_per_second;
    rows.push_back(std::move(j));
  }
  const Json doc = {{"model", r.model},
                    {"granularity", granularity_name(r.granularity)},
                    {"calibration_tokens", r.calibration_tokens},
                    {"tokens", r.eval_tokens},
                    {"rows", std::move(rows)}};
  std::fprintf(out, "%s\n", json_text(doc).c_str());
}

void write_sweep_svg(const SweepResult& r, const std::string& path) {
  // One line per method family. The f32 reference (error 0) has no place on a log scale, nor
  // have full-rank projections (KL ~1e-12, float rounding): errors under the floor are left out.
  constexpr double kPlotFloor = 1e-6;
  std::vector<std::pair<std::string, std::vector<const SweepRow*>>> lines;
  for (const SweepRow& row : r.rows) {
    if (row.method == "f32") continue;
    const std::string family = row.threshold > 0 ? row.method
                               : row.method == "zero (control)" ? row.method
                                                                : "element types";
    auto it = std::find_if(lines.begin(), lines.end(), [&](const auto& l) { return l.first == family; });
    if (it == lines.end()) it = lines.insert(lines.end(), {family, {}});
    it->second.push_back(&row);
  }
  std::vector<PlotPanel> panels(2);
  panels[0].title = "KL(f32 cache || x)";
  panels[0].y_label = "mean KL divergence (nats, log; < 1e-6 left out)";
  panels[1].title = "top-1 disagreement";
  panels[1].y_label = "1 - top-1 agreement (log scale)";
  for (int i = 0; i < 2; ++i) {
    panels[i].x_label = "KV bytes per token (allocated)";
    panels[i].x_min = 0;
    panels[i].x_max = r.rows.empty() ? 1 : r.rows[0].metrics.kv_bytes_per_token;
    panels[i].log10_y = true;
    for (const auto& [family, rows] : lines) {
      PlotSeries s{family, {}};
      for (const SweepRow* row : rows) {
        const double y = i == 0 ? row->metrics.kld_mean : 1.0 - row->metrics.top1_agreement;
        if (y >= kPlotFloor) s.points.emplace_back(row->metrics.kv_bytes_per_token, y);
      }
      std::sort(s.points.begin(), s.points.end());
      panels[i].series.push_back(std::move(s));
    }
  }
  write_svg(path, "KV cache: error vs memory, " + r.model + " (" + std::to_string(r.eval_tokens) + " tokens)",
            panels);
}

}  // namespace gguflow::lowrank
