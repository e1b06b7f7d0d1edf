#include "runtime/bench/bench_format.h"

#include <cstdio>
#include <string>
#include <vector>

#include "ops/error.h"
#include "runtime/core/json.h"

namespace gguflow::bench {
namespace {

std::string printf_string(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}
std::string mib(uint64_t bytes) { return printf_string("%.1f MiB", bytes / 1048576.0); }
std::string gbps(double bytes_per_s) { return printf_string("%.2f", bytes_per_s / 1e9); }

std::string markdown(const BenchReport& r) {
  std::string out;
  out += "model: " + r.model_path + " (" + mib(r.model_file_bytes) + " file, " +
         mib(r.weight_bytes_per_token) + " weights read per token); graph " + r.graph_name +
         "; scheduler " + r.scheduler + "; ctx " + std::to_string(r.n_ctx) +
         (r.n_depth > 0 ? ", depth " + std::to_string(r.n_depth) : "") + " (KV cache " +
         (r.kv_cache_summary.empty() ? mib(r.kv_cache_bytes) : r.kv_cache_summary) + ", arena " + mib(r.arena_bytes) + "); load " +
         printf_string("%.3f s", r.load_seconds) + "\n";
  for (const BandwidthResult& b : r.bandwidth)
    out += "streaming read bandwidth, " + std::to_string(b.threads) + " thread(s): " +
           gbps(b.median) + " GB/s median of " + std::to_string(b.bytes_per_s.size()) + " (" +
           gbps(b.min) + " - " + gbps(b.max) + ")\n";
  out += "peak RSS: VmHWM " +
         std::string(r.peak_rss_scope == "test" ? "reset before each test (peak during the test)"
                                                : "since process start (reset refused)") +
         "; roofline = tokens/s x weight bytes per token / bandwidth at that thread count\n\n";
  out += "| kernels | threads | test | t/s median | t/s min | t/s max | peak RSS | roofline |\n";
  out += "|---|---:|---|---:|---:|---:|---:|---:|\n";
  for (const BenchRow& row : r.rows) {
    out += "| " + row.kernels + " | " + std::to_string(row.threads) + " | " + row.test + " | " +
           printf_string("%.2f", row.tokens_per_s_median) + " | " +
           printf_string("%.2f", row.tokens_per_s_min) + " | " +
           printf_string("%.2f", row.tokens_per_s_max) + " | " + mib(row.peak_rss_bytes) + " | " +
           (row.generation ? printf_string("%.1f %%", 100 * row.roofline_fraction) : "-") + " |\n";
  }
  return out;
}

std::string json(const BenchReport& r) {
  Json rows = Json::array();
  for (const BenchRow& row : r.rows) {
    Json j = {{"test", row.test},
              {"n_tokens", row.n_tokens},
              {"threads", row.threads},
              {"kernels", row.kernels},
              {"tokens_per_s_median", row.tokens_per_s_median},
              {"tokens_per_s_min", row.tokens_per_s_min},
              {"tokens_per_s_max", row.tokens_per_s_max},
              {"seconds", row.seconds},
              {"peak_rss_bytes", row.peak_rss_bytes},
              {"peak_rss_scope", r.peak_rss_scope},
              {"bandwidth_bytes_per_s", row.bandwidth_bytes_per_s}};
    if (row.generation) j["roofline_fraction"] = row.roofline_fraction;
    j["weight_bytes_per_token"] = r.weight_bytes_per_token;
    j["model"] = r.model_path;
    j["model_file_bytes"] = r.model_file_bytes;
    j["graph"] = r.graph_name;
    j["scheduler"] = r.scheduler;
    j["n_ctx"] = r.n_ctx;
    j["n_depth"] = r.n_depth;
    j["kv_cache_bytes"] = r.kv_cache_bytes;
    j["kv_cache_summary"] = r.kv_cache_summary;
    j["arena_bytes"] = r.arena_bytes;
    rows.push_back(std::move(j));
  }
  return json_text(rows) + "\n";
}

// RFC 4180 quoting for fields that need it (paths with commas or quotes).
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string csv(const BenchReport& r) {
  std::string out =
      "test,n_tokens,threads,kernels,tokens_per_s_median,tokens_per_s_min,tokens_per_s_max,"
      "peak_rss_bytes,peak_rss_scope,bandwidth_bytes_per_s,roofline_fraction,"
      "weight_bytes_per_token,model,model_file_bytes,graph,scheduler,n_ctx,kv_cache_bytes,"
      "arena_bytes\n";
  for (const BenchRow& row : r.rows) {
    std::vector<std::string> f = {
        row.test, std::to_string(row.n_tokens), std::to_string(row.threads), csv_field(row.kernels),
        printf_string("%.6g", row.tokens_per_s_median), printf_string("%.6g", row.tokens_per_s_min),
        printf_string("%.6g", row.tokens_per_s_max), std::to_string(row.peak_rss_bytes),
        r.peak_rss_scope, printf_string("%.6g", row.bandwidth_bytes_per_s),
        row.generation ? printf_string("%.6g", row.roofline_fraction) : std::string(),
        std::to_string(r.weight_bytes_per_token), csv_field(r.model_path),
        std::to_string(r.model_file_bytes), csv_field(r.graph_name), r.scheduler,
        std::to_string(r.n_ctx), std::to_string(r.kv_cache_bytes), std::to_string(r.arena_bytes)};
    for (size_t i = 0; i < f.size(); ++i) out += (i ? "," : "") + f[i];
    out += "\n";
  }
  return out;
}

}  // namespace

BenchFormat parse_bench_format(std::string_view name) {
  if (name == "md") return BenchFormat::kMarkdown;
  if (name == "json") return BenchFormat::kJson;
  if (name == "csv") return BenchFormat::kCsv;
  throw error("bench: --format must be md, json or csv, found '", name, "'");
}

std::string format_bench_report(const BenchReport& report, BenchFormat format) {
  switch (format) {
    case BenchFormat::kMarkdown: return markdown(report);
    case BenchFormat::kJson: return json(report);
    case BenchFormat::kCsv: return csv(report);
  }
  return {};
}

}  // namespace gguflow::bench
