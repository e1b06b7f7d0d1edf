// Continuous batching: one thread runs the session's graph step after step over every running
// generation at once. Each request holds one KV slot of the session (SessionOptions::n_slots =
// --parallel); a step feeds the next token of every decoding request and chunks of the prompts
// still being read (Session::step_slots), then samples each finished row with that request's own
// sampler. Requests join at any step boundary when a slot is free and leave when they finish or
// are cancelled; the rest wait in a bounded queue.
//
// Batch invariance: a request's tokens do not depend on what else runs. Every row of a step is
// computed by itself (no kernel mixes rows; attention reads only the row's own slot), the
// weights are packed before the first step so every step multiplies the same layout, threads
// split output features, never a sum, and each request samples with its own seeded generator.
// tests/server/batch_engine_test.cc holds the engine to this bit for bit.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/server/generation_job.h"
#include "runtime/server/metrics.h"
#include "runtime/server/stop_matcher.h"
#include "runtime/tokenizer/detokenizer.h"
#include "runtime/tokenizer/tokenizer.h"

namespace gguflow::server {

struct EngineOptions {
  int64_t max_queue = 64;        // waiting requests beyond the running ones; more: refused
  int64_t prefill_chunk = 256;   // prompt tokens of one request per step (decode latency bound)
};

class BatchEngine {
 public:
  // `session` (n_slots >= 1), `tokenizer` and `metrics` must outlive the engine. Packs the
  // weights and starts the step thread.
  BatchEngine(exec::Session& session, const Tokenizer& tokenizer, Metrics& metrics,
              EngineOptions options = {});
  ~BatchEngine();  // cancels what is left and joins the thread
  BatchEngine(const BatchEngine&) = delete;
  BatchEngine& operator=(const BatchEngine&) = delete;

  // Queues a job. Throws ApiError 503 (with the queue size) when the queue is full or the
  // engine is shutting down, 400 when the prompt is empty or longer than the context.
  void submit(std::shared_ptr<GenerationJob> job);

  // Stops accepting jobs, lets the running and queued ones finish for up to `grace`, cancels the
  // rest, and returns when the step thread has stopped.
  void shutdown(std::chrono::milliseconds grace);

 private:
  // A job holding a slot.
  struct Running {
    std::shared_ptr<GenerationJob> job;
    int64_t slot = 0;
    size_t prompt_done = 0;          // prompt tokens evaluated so far
    TokenId next_input = kNoToken;   // the sampled token to feed next (decoding), or none yet
    std::unique_ptr<sampling::Sampler> sampler;
    std::unique_ptr<StreamingDetokenizer> detokenizer;
    std::unique_ptr<StopMatcher> stop;
    int64_t generated = 0;
    std::chrono::steady_clock::time_point last_token;
    bool done = false;  // finished this step; its slot is released after it
  };

  void loop();
  // Moves queued jobs into free slots (dropping cancelled ones). Called with mutex_ held.
  void admit();
  // One graph step over every running job; returns false when nothing ran.
  bool step();
  // The next token of `r` from its logits (touches nothing but r's sampler: runs in parallel).
  TokenId sample(Running& r, std::span<const float> logits) const;
  // Takes `next` as r's token (stream, metrics); finishes `r` when it is done.
  void advance(Running& r, TokenId next);
  void finish(Running& r, FinishReason reason, const std::string& error = "");
  void release_finished();
  void publish_gauges();

  exec::Session& session_;
  const Tokenizer& tokenizer_;
  Metrics& metrics_;
  const EngineOptions options_;
  const size_t n_sampled_;  // logits rows sampled over: ids the tokenizer can print

  std::mutex mutex_;  // guards the fields up to the step thread's own
  std::condition_variable wake_;  // the step thread: work arrived or stop
  std::condition_variable idle_;  // shutdown(): the step thread finished a step
  std::deque<std::shared_ptr<GenerationJob>> queue_;
  int64_t n_running_ = 0;    // running_.size() as of the last step, for submit and shutdown
  bool accepting_ = true;
  bool cancel_all_ = false;  // shutdown's grace is over
  bool stopping_ = false;    // the thread ends once nothing runs

  // Step thread only.
  std::vector<std::unique_ptr<Running>> running_;
  std::vector<int64_t> free_slots_;
  std::thread thread_;
};

}  // namespace gguflow::server
