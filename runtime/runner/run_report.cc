#include "runtime/runner/run_report.h"

#include <cstdio>
#include <cstdlib>

#include "runtime/core/json_writer.h"

namespace gguflow::runner {
namespace {

struct Totals {
  int64_t prompt_tokens = 0, generated_tokens = 0;
  double prompt_seconds = 0, generate_seconds = 0;
};

Totals totals(const RunReport& report) {
  Totals t;
  for (const GenerationResult& r : report.turns) {
    t.prompt_tokens += static_cast<int64_t>(r.prompt_ids.size());
    t.generated_tokens += static_cast<int64_t>(r.ids.size());
    t.prompt_seconds += r.prompt_seconds;
    t.generate_seconds += r.generate_seconds;
  }
  return t;
}

double per_second(int64_t count, double seconds) { return seconds > 0 ? count / seconds : 0.0; }

// A float setting as the shortest decimal that reads back as the same float (0.8, not
// 0.800000012, the exact value of the float widened to double).
double decimal(float value) {
  char text[32];
  for (int digits = 6; digits <= 9; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, static_cast<double>(value));
    if (std::strtof(text, nullptr) == value) break;
  }
  return std::strtod(text, nullptr);
}

void write_ids(JsonWriter& json, const std::vector<TokenId>& ids) {
  json.begin_array();
  for (TokenId id : ids) json.value(static_cast<int64_t>(id));
  json.end_array();
}

}  // namespace

std::string timings_line(const RunReport& report) {
  const Totals t = totals(report);
  char line[512];
  std::snprintf(line, sizeof line,
                "load %.1f ms | prompt %lld tokens in %.1f ms (%.1f tok/s) | generated %lld tokens "
                "in %.1f ms (%.1f tok/s) | stop: %s | kernels %s | seed %llu",
                report.load_seconds * 1e3, static_cast<long long>(t.prompt_tokens),
                t.prompt_seconds * 1e3, per_second(t.prompt_tokens, t.prompt_seconds),
                static_cast<long long>(t.generated_tokens), t.generate_seconds * 1e3,
                per_second(t.generated_tokens, t.generate_seconds),
                report.turns.empty() ? "-" : stop_reason_name(report.turns.back().stop),
                report.kernels_name.c_str(), static_cast<unsigned long long>(report.sampler.seed));
  std::string text = line;
  if (report.context_shifts > 0) text += " | context shifts " + std::to_string(report.context_shifts);
  return text;
}

std::string report_json(const RunReport& report) {
  const Totals t = totals(report);
  JsonWriter json;
  json.begin_object();
  json.key("model").value(report.model_path);
  json.key("model_source").value(report.model_source);
  json.key("random_weights").value(report.random_weights);
  json.key("graph").value(report.graph_path);
  json.key("context_shifts").value(report.context_shifts);
  json.key("kernels").begin_object();
  json.key("name").value(report.kernels_name);
  json.key("target").value(report.kernels_target);
  json.key("path").value(report.kernels_path);
  json.end_object();
  json.key("threads").value(report.threads);
  json.key("n_ctx").value(report.n_ctx);
  json.key("mode").value(report.mode);

  const sampling::SamplerConfig& s = report.sampler;
  json.key("sampler").begin_object();
  json.key("temperature").value(decimal(s.temperature));
  json.key("top_k").value(s.top_k);
  json.key("top_p").value(decimal(s.top_p));
  json.key("min_p").value(decimal(s.min_p));
  json.key("repeat_penalty").value(decimal(s.repeat_penalty));
  json.key("repeat_last_n").value(s.repeat_last_n);
  json.key("seed").value(s.seed);
  json.end_object();

  // The single-turn fields; for a chat, those of the last turn.
  static const GenerationResult kNone;
  const GenerationResult& last = report.turns.empty() ? kNone : report.turns.back();
  json.key("prompt").value(report.prompt);
  json.key("prompt_ids");
  write_ids(json, last.prompt_ids);
  json.key("text").value(last.text);
  json.key("ids");
  write_ids(json, last.ids);
  json.key("stop").value(report.turns.empty() ? "" : stop_reason_name(last.stop));
  if (report.turns.size() > 1) {
    json.key("turns").begin_array();
    for (const GenerationResult& r : report.turns) {
      json.begin_object();
      json.key("prompt_ids");
      write_ids(json, r.prompt_ids);
      json.key("text").value(r.text);
      json.key("ids");
      write_ids(json, r.ids);
      json.key("stop").value(stop_reason_name(r.stop));
      json.end_object();
    }
    json.end_array();
  }

  json.key("timings").begin_object();
  json.key("load_ms").value(report.load_seconds * 1e3);
  json.key("prompt_tokens").value(t.prompt_tokens);
  json.key("prompt_ms").value(t.prompt_seconds * 1e3);
  json.key("prompt_tokens_per_s").value(per_second(t.prompt_tokens, t.prompt_seconds));
  json.key("generated_tokens").value(t.generated_tokens);
  json.key("generate_ms").value(t.generate_seconds * 1e3);
  json.key("generate_tokens_per_s").value(per_second(t.generated_tokens, t.generate_seconds));
  json.end_object();
  json.end_object();
  return json.str() + "\n";
}

}  // namespace gguflow::runner
