#include "runtime/runner/run_report.h"

#include <cstdio>
#include <cstdlib>

#include "runtime/core/json.h"

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
  Json json = {{"model", report.model_path},
               {"model_source", report.model_source},
               {"random_weights", report.random_weights},
               {"graph", report.graph_path},
               {"context_shifts", report.context_shifts},
               {"kernels",
                {{"name", report.kernels_name},
                 {"target", report.kernels_target},
                 {"path", report.kernels_path}}},
               {"threads", report.threads},
               {"n_ctx", report.n_ctx},
               {"mode", report.mode}};
  const sampling::SamplerConfig& s = report.sampler;
  json["sampler"] = {{"temperature", decimal(s.temperature)},
                     {"top_k", s.top_k},
                     {"top_p", decimal(s.top_p)},
                     {"min_p", decimal(s.min_p)},
                     {"repeat_penalty", decimal(s.repeat_penalty)},
                     {"repeat_last_n", s.repeat_last_n},
                     {"seed", s.seed}};

  // The single-turn fields; for a chat, those of the last turn.
  static const GenerationResult kNone;
  const GenerationResult& last = report.turns.empty() ? kNone : report.turns.back();
  json["prompt"] = report.prompt;
  json["prompt_ids"] = last.prompt_ids;
  json["text"] = last.text;
  json["ids"] = last.ids;
  json["stop"] = report.turns.empty() ? "" : stop_reason_name(last.stop);
  if (report.turns.size() > 1) {
    Json& turns = json["turns"] = Json::array();
    for (const GenerationResult& r : report.turns)
      turns.push_back({{"prompt_ids", r.prompt_ids},
                       {"text", r.text},
                       {"ids", r.ids},
                       {"stop", stop_reason_name(r.stop)}});
  }
  json["timings"] = {
      {"load_ms", report.load_seconds * 1e3},
      {"prompt_tokens", t.prompt_tokens},
      {"prompt_ms", t.prompt_seconds * 1e3},
      {"prompt_tokens_per_s", per_second(t.prompt_tokens, t.prompt_seconds)},
      {"generated_tokens", t.generated_tokens},
      {"generate_ms", t.generate_seconds * 1e3},
      {"generate_tokens_per_s", per_second(t.generated_tokens, t.generate_seconds)}};
  return json_text(json) + "\n";
}

}  // namespace gguflow::runner
