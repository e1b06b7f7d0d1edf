// One generation request as the batch engine runs it, and the channel through which its HTTP
// handler receives the text: the engine thread appends text and finally a finish reason; the
// handler thread waits for them. Cancellation goes the other way (a client that went away).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/sampling/sampler.h"
#include "runtime/tokenizer/tokenizer.h"

namespace gguflow::server {

enum class FinishReason {
  kStop,       // end-of-generation token or a stop string ("stop")
  kLength,     // max_tokens, or the context is full ("length")
  kCancelled,  // the client went away or the server is shutting down
  kError,      // the step failed (the message says why)
};
const char* finish_reason_name(FinishReason reason);  // OpenAI's names; "cancelled", "error"

struct JobSpec {
  std::vector<TokenId> prompt;      // at most the context; not empty
  sampling::SamplerConfig sampler;  // validated
  int64_t max_tokens = -1;          // < 0: until the context is full
  std::vector<std::string> stop;    // stop strings
  bool ignore_eos = false;          // never sample an end-of-generation token (benchmarks, tests)
};

// What a handler takes from the channel at once.
struct JobUpdate {
  std::string text;                     // new text since the last take (may be empty)
  std::optional<FinishReason> finished;  // set once, with the last text
  std::string error;                    // for kError
  int64_t prompt_tokens = 0, completion_tokens = 0;
};

class GenerationJob {
 public:
  explicit GenerationJob(JobSpec spec)
      : spec_(std::move(spec)), arrived_(std::chrono::steady_clock::now()) {}
  const JobSpec& spec() const { return spec_; }
  std::chrono::steady_clock::time_point arrived() const { return arrived_; }  // time to first token

  // Engine side.
  void append(const std::string& text, int64_t completion_tokens);
  void finish(FinishReason reason, int64_t completion_tokens, std::string error = "");

  // Handler side: waits until there is new text or the job finished, at most `timeout`; returns
  // what arrived since the last call (empty text and no finish on timeout).
  JobUpdate take(std::chrono::milliseconds timeout);
  // Asks the engine to stop this job at its next step (idempotent).
  void cancel() { cancelled_.store(true); }
  bool cancelled() const { return cancelled_.load(); }

 private:
  const JobSpec spec_;
  const std::chrono::steady_clock::time_point arrived_;
  std::atomic<bool> cancelled_{false};
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string text_;  // appended, not yet taken
  std::optional<FinishReason> finished_;
  bool finish_taken_ = false;
  std::string error_;
  int64_t completion_tokens_ = 0;
};

}  // namespace gguflow::server
