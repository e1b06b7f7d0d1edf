#include "runtime/lowrank/kv_calibrate.h"

#include <algorithm>
#include <filesystem>

#include "ops/error.h"
#include "runtime/core/json.h"
#include "runtime/lowrank/svg_plot.h"

namespace gguflow::lowrank {
namespace {

constexpr double kReportedThresholds[] = {0.5, 0.9, 0.95, 0.99};

std::string group_label(const KvAnalysis& a, int64_t index) {
  const int64_t layer = index / a.groups;
  std::string s = "layer " + std::to_string(layer);
  if (a.granularity == Granularity::kHead) s += " head " + std::to_string(index % a.groups);
  return s;
}

// r = 1, 2, 4, ... and always the full dimension.
std::vector<int64_t> reported_ranks(int64_t dim) {
  std::vector<int64_t> r;
  for (int64_t x = 1; x < dim; x *= 2) r.push_back(x);
  r.push_back(dim);
  return r;
}

std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

KvAnalysis analyse(const KvSamples& s) {
  KvAnalysis a;
  a.granularity = s.granularity;
  a.keys = s.keys;
  a.n_layer = s.n_layer;
  a.groups = s.groups;
  a.group_dim = s.group_dim;
  a.tokens = s.tokens;
  const int64_t need = min_samples_for(s.group_dim);
  for (int64_t i = 0; i < s.n_layer * s.groups; ++i) {
    KvAnalysis tmp;
    tmp.groups = s.groups;
    tmp.granularity = s.granularity;
    const std::string what = group_label(tmp, i);
    a.k.push_back(principal_components(s.k[i], need, (what + " K").c_str()));
    a.v.push_back(principal_components(s.v[i], need, (what + " V").c_str()));
  }
  return a;
}

void print_spectrum_text(const KvAnalysis& a, const std::string& model, FILE* out) {
  std::fprintf(out, "KV spectrum of %s: %lld tokens, granularity %s, keys %s, dimension %lld per group\n",
               model.c_str(), static_cast<long long>(a.tokens), granularity_name(a.granularity),
               key_position_name(a.keys), static_cast<long long>(a.group_dim));
  std::fprintf(out, "cumulative energy of the top r principal directions (mean-centred)\n\n");
  std::string header = "group              kv   r@50%  r@90%  r@95%  r@99% |";
  for (int64_t r : reported_ranks(a.group_dim)) header += " r=" + std::to_string(r) + std::string(r < 10 ? 3 : r < 100 ? 2 : 1, ' ');
  std::fprintf(out, "%s\n", header.c_str());
  for (int64_t i = 0; i < a.n_layer * a.groups; ++i)
    for (int kv = 0; kv < 2; ++kv) {
      const Components& c = kv == 0 ? a.k[i] : a.v[i];
      std::string line = group_label(a, i);
      line.resize(18, ' ');
      line += kv == 0 ? " K  " : " V  ";
      for (double t : kReportedThresholds) {
        std::string r = std::to_string(rank_for_energy(c.energy, t));
        line += std::string(7 - std::min<size_t>(6, r.size()), ' ') + r;
      }
      line += " |";
      for (int64_t r : reported_ranks(a.group_dim)) line += " " + fixed(c.energy[r], 3);
      std::fprintf(out, "%s\n", line.c_str());
    }
}

void print_spectrum_json(const KvAnalysis& a, const std::string& model, FILE* out) {
  Json groups = Json::array();
  for (int64_t i = 0; i < a.n_layer * a.groups; ++i)
    for (int kv = 0; kv < 2; ++kv) {
      const Components& c = kv == 0 ? a.k[i] : a.v[i];
      groups.push_back({{"layer", i / a.groups},
                        {"head", a.granularity == Granularity::kHead ? i % a.groups : -1},
                        {"kv", kv ? "V" : "K"},
                        {"energy", c.energy},
                        {"eigenvalues", c.eigen.values},
                        {"rank_50", rank_for_energy(c.energy, 0.5)},
                        {"rank_90", rank_for_energy(c.energy, 0.9)},
                        {"rank_95", rank_for_energy(c.energy, 0.95)},
                        {"rank_99", rank_for_energy(c.energy, 0.99)}});
    }
  const Json doc = {{"model", model},
                    {"tokens", a.tokens},
                    {"granularity", granularity_name(a.granularity)},
                    {"keys", key_position_name(a.keys)},
                    {"dim", a.group_dim},
                    {"groups", std::move(groups)}};
  std::fprintf(out, "%s\n", json_text(doc).c_str());
}

void write_spectrum_svg(const KvAnalysis& a, const std::string& model, const std::string& path) {
  std::vector<PlotPanel> panels(2);
  for (int kv = 0; kv < 2; ++kv) {
    PlotPanel& p = panels[kv];
    p.title = kv == 0 ? std::string("K (") + key_position_name(a.keys) + " keys)" : "V (values)";
    p.x_label = "rank r (principal directions kept)";
    p.y_label = "cumulative energy";
    p.log2_x = true;
    p.x_min = 1;
    p.x_max = static_cast<double>(a.group_dim);
    p.y_min = 0;
    p.y_max = 1;
    for (int64_t i = 0; i < a.n_layer * a.groups; ++i) {
      const Components& c = kv == 0 ? a.k[i] : a.v[i];
      PlotSeries s{group_label(a, i), {}};
      for (int64_t r = 1; r <= a.group_dim; ++r) s.points.emplace_back(static_cast<double>(r), c.energy[r]);
      p.series.push_back(std::move(s));
    }
  }
  write_svg(path, "KV cache spectrum: " + model + " (" + std::to_string(a.tokens) + " tokens)", panels);
}

void check_calibrate_options(const CalibrateOptions& o, int64_t group_dim) {
  if ((o.energy != 0) == (o.rank != 0))
    throw error("kv calibrate: expected exactly one of --energy T and --rank R");
  if (o.rank == 0 && !(o.energy > 0.0 && o.energy <= 1.0))
    throw error("--energy: expected a threshold in (0, 1], found ", o.energy);
  if (o.energy == 0 && (o.rank < 1 || o.rank > group_dim))
    throw error("--rank: expected a rank in 1..", group_dim, " (the dimension of a group), found ", o.rank);
  if (o.max_rank < 0) throw error("--max-rank: expected a positive rank, found ", o.max_rank);
}

KvProjection make_projection(const KvAnalysis& a, const CalibrateOptions& o, const StudyModel& m) {
  check_calibrate_options(o, a.group_dim);
  KvProjection p;
  p.model_name = m.name;
  p.model_file = std::filesystem::path(m.path).filename().string();
  p.model_architecture = m.file->architecture();
  p.n_layer = a.n_layer;
  p.n_head_kv = m.n_head_kv;
  p.head_dim = m.head_dim;
  p.granularity = a.granularity;
  p.keys = a.keys;
  p.energy_threshold = o.energy;
  p.uniform_rank = o.rank;
  p.max_rank = o.max_rank;
  p.calibration_text = o.text_name;
  p.calibration_tokens = a.tokens;
  const int64_t d = p.dim(), gd = a.group_dim;
  for (int kv = 0; kv < 2; ++kv) {
    auto& set = kv == 0 ? p.k : p.v;
    const auto& comps = kv == 0 ? a.k : a.v;
    for (int64_t l = 0; l < a.n_layer; ++l) {
      LayerBasis b;
      b.mean.assign(static_cast<size_t>(d), 0.0f);
      for (int64_t g = 0; g < a.groups; ++g) {
        const Components& c = comps[l * a.groups + g];
        int64_t r = o.rank > 0 ? o.rank : rank_for_energy(c.energy, o.energy);
        if (o.max_rank > 0) r = std::min(r, o.max_rank);
        r = std::clamp<int64_t>(r, 1, gd);
        b.ranks.push_back(r);
        for (int64_t i = 0; i < gd; ++i) b.mean[g * gd + i] = static_cast<float>(c.mean[i]);
        for (int64_t j = 0; j < r; ++j) {
          std::vector<float> row(static_cast<size_t>(d), 0.0f);  // basis vector over the cache row
          for (int64_t i = 0; i < gd; ++i) row[g * gd + i] = static_cast<float>(c.eigen.vectors[j * gd + i]);
          b.basis.insert(b.basis.end(), row.begin(), row.end());
        }
      }
      set.push_back(std::move(b));
    }
  }
  return p;
}

void print_schedule(const KvProjection& p, FILE* out) {
  std::fprintf(out, "schedule (%s granularity, %s keys, %s):\n", granularity_name(p.granularity),
               key_position_name(p.keys),
               p.energy_threshold > 0 ? ("energy " + fixed(p.energy_threshold, 4)).c_str()
                                      : ("uniform rank " + std::to_string(p.uniform_rank)).c_str());
  std::fprintf(out, "  layer  K rank%s  V rank%s   (of %lld)\n", p.groups() > 1 ? "s" : "",
               p.groups() > 1 ? "s" : "", static_cast<long long>(p.dim() / p.groups()));
  for (int64_t l = 0; l < p.n_layer; ++l) {
    auto list = [](const LayerBasis& b) {
      std::string s;
      for (size_t i = 0; i < b.ranks.size(); ++i) s += (i ? "," : "") + std::to_string(b.ranks[i]);
      return s;
    };
    std::fprintf(out, "  %5lld  %7s  %7s\n", static_cast<long long>(l), list(p.k[l]).c_str(), list(p.v[l]).c_str());
  }
  const double full = 4.0 * static_cast<double>(p.full_floats_per_token());
  const double proj = 4.0 * static_cast<double>(p.projected_floats_per_token());
  std::fprintf(out, "KV bytes per token (f32): full %.0f, projected %.0f (%.3f of full, %.2fx smaller)\n", full,
               proj, proj / full, full / proj);
}

}  // namespace gguflow::lowrank
