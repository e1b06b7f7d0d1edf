#include "runtime/server/metrics.h"

#include <cstdio>

namespace gguflow::server {
namespace {

std::string number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", x);
  return text;
}

std::string header(const std::string& name, const std::string& type, const std::string& help) {
  return "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

std::string single(const std::string& name, const std::string& type, const std::string& help,
                   int64_t value) {
  return header(name, type, help) + name + " " + std::to_string(value) + "\n";
}

}  // namespace

void Histogram::observe(double seconds) {
  std::lock_guard lock(mutex_);
  for (size_t i = 0; i < kBounds.size(); ++i)
    if (seconds <= kBounds[i]) {
      ++buckets_[i];
      break;
    }
  ++count_;
  sum_ += seconds;
}

std::string Histogram::render(const std::string& name, const std::string& help) const {
  std::lock_guard lock(mutex_);
  std::string out = header(name, "histogram", help);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kBounds.size(); ++i) {
    cumulative += buckets_[i];
    out += name + "_bucket{le=\"" + number(kBounds[i]) + "\"} " + std::to_string(cumulative) + "\n";
  }
  out += name + "_bucket{le=\"+Inf\"} " + std::to_string(count_) + "\n";
  out += name + "_sum " + number(sum_) + "\n";
  out += name + "_count " + std::to_string(count_) + "\n";
  return out;
}

void Metrics::count_request(const std::string& endpoint, int status) {
  std::lock_guard lock(mutex_);
  ++requests_[{endpoint, status}];
}

std::string Metrics::render() const {
  std::string out = header("gguflow_requests_total", "counter",
                           "HTTP requests answered, by endpoint and status code.");
  {
    std::lock_guard lock(mutex_);
    for (const auto& [key, count] : requests_)
      out += "gguflow_requests_total{endpoint=\"" + key.first + "\",status=\"" +
             std::to_string(key.second) + "\"} " + std::to_string(count) + "\n";
  }
  out += single("gguflow_prompt_tokens_total", "counter", "Prompt tokens evaluated.",
                prompt_tokens_);
  out += single("gguflow_generated_tokens_total", "counter", "Tokens generated.",
                generated_tokens_);
  out += single("gguflow_requests_cancelled_total", "counter",
                "Generations stopped before their end: the client went away or the server shut "
                "down.",
                cancelled_);
  out += single("gguflow_queue_depth", "gauge",
                "Generation requests waiting for a KV slot.", queue_depth_);
  out += single("gguflow_kv_slots_in_use", "gauge", "KV cache slots held by running requests.",
                slots_in_use_);
  out += single("gguflow_kv_slots_total", "gauge", "KV cache slots (--parallel).", slots_total_);
  out += ttft_.render("gguflow_time_to_first_token_seconds",
                      "From a request's arrival to its first generated token.");
  out += per_token_.render("gguflow_time_per_output_token_seconds",
                           "Between consecutive generated tokens of one request.");
  return out;
}

}  // namespace gguflow::server
