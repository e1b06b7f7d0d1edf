// The server's counters for GET /metrics, in Prometheus' text format (version 0.0.4):
// requests by endpoint and status, prompt and generated tokens, cancelled requests, the queue
// depth and KV slots in use (gauges), and histograms of the time to first token and of the time
// per generated token. Thread-safe: handlers and the engine update it concurrently.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace gguflow::server {

// A Prometheus histogram over fixed upper bounds (seconds).
class Histogram {
 public:
  static constexpr std::array<double, 14> kBounds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                     1,     2.5,  5,     10,   30,  60,  120};
  void observe(double seconds);
  // The exposition lines of metric `name` (cumulative buckets, +Inf, _sum, _count).
  std::string render(const std::string& name, const std::string& help) const;

 private:
  mutable std::mutex mutex_;
  std::array<uint64_t, kBounds.size()> buckets_{};  // per bound, not cumulative
  uint64_t count_ = 0;
  double sum_ = 0;
};

class Metrics {
 public:
  explicit Metrics(int64_t slots_total) : slots_total_(slots_total) {}

  void count_request(const std::string& endpoint, int status);
  void add_prompt_tokens(int64_t n) { prompt_tokens_ += n; }
  void add_generated_tokens(int64_t n) { generated_tokens_ += n; }
  void count_cancelled() { ++cancelled_; }
  void set_queue_depth(int64_t n) { queue_depth_ = n; }
  void set_slots_in_use(int64_t n) { slots_in_use_ = n; }
  Histogram& time_to_first_token() { return ttft_; }
  Histogram& time_per_token() { return per_token_; }

  int64_t slots_in_use() const { return slots_in_use_; }

  std::string render() const;

 private:
  const int64_t slots_total_;
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;  // (endpoint, status) -> count
  std::atomic<int64_t> prompt_tokens_{0}, generated_tokens_{0}, cancelled_{0};
  std::atomic<int64_t> queue_depth_{0}, slots_in_use_{0};
  Histogram ttft_, per_token_;
};

}  // namespace gguflow::server
