#include "runtime/server/batch_engine.h"

#include <algorithm>

#include <tbb/parallel_for.h>

#include "runtime/server/api_error.h"

namespace gguflow::server {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

BatchEngine::BatchEngine(exec::Session& session, const Tokenizer& tokenizer, Metrics& metrics,
                         EngineOptions options)
    : session_(session),
      tokenizer_(tokenizer),
      metrics_(metrics),
      options_(options),
      n_sampled_(std::min<size_t>(static_cast<size_t>(session.output_width()),
                                  tokenizer.vocab_size())) {
  GGUFLOW_CHECK(session_.max_batch() >= session_.n_slots());
  // Packed weights from the first step on: a request alone and a request in a batch then
  // multiply the same layout (the packed and row-major kernels round differently).
  session_.pack_weights();
  for (int64_t slot = session_.n_slots() - 1; slot >= 0; --slot) free_slots_.push_back(slot);
  thread_ = std::thread([this] { loop(); });
}

BatchEngine::~BatchEngine() { shutdown(std::chrono::milliseconds(0)); }

void BatchEngine::submit(std::shared_ptr<GenerationJob> job) {
  const int64_t n_prompt = static_cast<int64_t>(job->spec().prompt.size());
  if (n_prompt == 0) throw invalid_request("prompt: expected at least one token, found none");
  if (n_prompt > session_.n_ctx())
    throw invalid_request("the prompt is " + std::to_string(n_prompt) +
                              " tokens, longer than the context of " +
                              std::to_string(session_.n_ctx()) +
                              " tokens (the server's --ctx); shorten the prompt",
                          "context_length_exceeded");
  {
    std::lock_guard lock(mutex_);
    if (!accepting_)
      throw ApiError(503, "the server is shutting down", "server_error", "shutting_down");
    // Waiting beyond max_queue, on top of the slots that are free, is refused.
    const int64_t free_now = session_.n_slots() - n_running_;
    if (static_cast<int64_t>(queue_.size()) >= options_.max_queue + free_now)
      throw ApiError(503,
                     "the server is busy: " + std::to_string(queue_.size()) +
                         " requests are waiting for one of " + std::to_string(session_.n_slots()) +
                         " slots; retry later",
                     "server_error", "queue_full");
    queue_.push_back(std::move(job));
    metrics_.set_queue_depth(static_cast<int64_t>(queue_.size()));
  }
  wake_.notify_one();
}

void BatchEngine::shutdown(std::chrono::milliseconds grace) {
  std::unique_lock lock(mutex_);
  if (!thread_.joinable()) return;
  accepting_ = false;
  idle_.wait_for(lock, grace, [&] { return queue_.empty() && n_running_ == 0; });
  cancel_all_ = true;
  stopping_ = true;
  lock.unlock();
  wake_.notify_all();
  thread_.join();
}

void BatchEngine::loop() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !running_.empty() || !queue_.empty(); });
      if (cancel_all_) {
        for (auto& job : queue_) job->cancel();
        for (auto& r : running_) r->job->cancel();
      }
      admit();
      if (stopping_ && running_.empty() && queue_.empty()) break;
    }
    step();
    release_finished();
    {
      std::lock_guard lock(mutex_);
      n_running_ = static_cast<int64_t>(running_.size());
      publish_gauges();
    }
    idle_.notify_all();
  }
  std::lock_guard lock(mutex_);
  n_running_ = 0;
  publish_gauges();
  idle_.notify_all();
}

void BatchEngine::admit() {
  while (!queue_.empty() && (!free_slots_.empty() || queue_.front()->cancelled())) {
    std::shared_ptr<GenerationJob> job = std::move(queue_.front());
    queue_.pop_front();
    if (job->cancelled()) {  // gone before it started
      job->finish(FinishReason::kCancelled, 0);
      metrics_.count_cancelled();
      continue;
    }
    auto r = std::make_unique<Running>();
    r->slot = free_slots_.back();
    free_slots_.pop_back();
    session_.reset_slot(r->slot);
    const JobSpec& spec = job->spec();
    r->sampler = std::make_unique<sampling::Sampler>(spec.sampler);
    for (TokenId id : spec.prompt) r->sampler->accept(id);  // the repetition penalty's history
    // The detokenizer reads the prompt first so the reply's first word keeps its spacing.
    r->detokenizer = std::make_unique<StreamingDetokenizer>(tokenizer_);
    for (TokenId id : spec.prompt) r->detokenizer->push(id);
    r->stop = std::make_unique<StopMatcher>(spec.stop);
    r->job = std::move(job);
    running_.push_back(std::move(r));
  }
  n_running_ = static_cast<int64_t>(running_.size());
  publish_gauges();
}

bool BatchEngine::step() {
  for (auto& r : running_)
    if (r->job->cancelled()) finish(*r, FinishReason::kCancelled);

  // Decoding requests first (one token each: their latency), then prompt chunks in arrival
  // order within what is left of the step's token budget.
  std::vector<exec::Session::SlotTokens> inputs;
  std::vector<Running*> owners;
  int64_t budget = session_.max_batch();
  for (auto& r : running_)
    if (!r->done && r->next_input != kNoToken) {
      inputs.push_back({r->slot, std::span<const int32_t>(&r->next_input, 1)});
      owners.push_back(r.get());
      --budget;
    }
  for (auto& r : running_) {
    if (r->done || r->next_input != kNoToken || budget <= 0) continue;
    const std::vector<TokenId>& prompt = r->job->spec().prompt;
    const int64_t n = std::min({static_cast<int64_t>(prompt.size() - r->prompt_done),
                                options_.prefill_chunk, budget});
    inputs.push_back({r->slot, std::span<const int32_t>(prompt).subspan(r->prompt_done, n)});
    owners.push_back(r.get());
    budget -= n;
  }
  if (inputs.empty()) return false;

  std::vector<std::span<const float>> outputs;
  try {
    outputs = session_.step_slots(inputs);
  } catch (const Error& e) {  // e.g. an id the model lacks: those requests fail, the server runs
    for (Running* r : owners) finish(*r, FinishReason::kError, e.what());
    return true;
  }
  // The sequences that sample this step: every decoding one, and prompts whose last chunk ran.
  std::vector<TokenId> next(owners.size(), kNoToken);
  std::vector<std::string> sample_errors(owners.size());  // a request whose sampler refused (nan logits)
  std::vector<size_t> sampling;
  for (size_t i = 0; i < owners.size(); ++i) {
    Running& r = *owners[i];
    if (r.next_input == kNoToken) {  // a prompt chunk
      r.prompt_done += inputs[i].tokens.size();
      metrics_.add_prompt_tokens(static_cast<int64_t>(inputs[i].tokens.size()));
      if (r.prompt_done < r.job->spec().prompt.size()) continue;
    }
    sampling.push_back(i);
  }
  // Each sequence's sampler on its own logits, in parallel: the step's other threads would
  // otherwise wait while this one reads 8 x 151,936 logits (~0.7 ms of a ~19 ms step of 8
  // sequences). Samplers are per request, so the tokens do not depend on the split.
  session_.run_in_threads([&] {
    tbb::parallel_for(size_t{0}, sampling.size(), [&](size_t k) {
      const size_t i = sampling[k];
      try {
        next[i] = sample(*owners[i], outputs[i]);
      } catch (const Error& e) {  // that request fails; the others and the server go on
        sample_errors[i] = e.what();
      }
    });
  });
  for (size_t i : sampling) {
    if (!sample_errors[i].empty()) finish(*owners[i], FinishReason::kError, sample_errors[i]);
    else advance(*owners[i], next[i]);
  }
  return true;
}

TokenId BatchEngine::sample(Running& r, std::span<const float> logits) const {
  std::span<const TokenId> banned;
  if (r.job->spec().ignore_eos) banned = tokenizer_.vocab().end_of_generation();
  return r.sampler->sample(logits.first(n_sampled_), banned);
}

void BatchEngine::advance(Running& r, TokenId next) {
  const JobSpec& spec = r.job->spec();
  if (tokenizer_.vocab().is_end_of_generation(next)) return finish(r, FinishReason::kStop);

  const auto now = Clock::now();
  ++r.generated;
  metrics_.add_generated_tokens(1);
  if (r.generated == 1) metrics_.time_to_first_token().observe(seconds(now - r.job->arrived()));
  else metrics_.time_per_token().observe(seconds(now - r.last_token));
  r.last_token = now;

  const std::string text = r.stop->push(r.detokenizer->push(next));
  if (!text.empty()) r.job->append(text, r.generated);
  if (r.stop->stopped()) return finish(r, FinishReason::kStop);
  if (spec.max_tokens >= 0 && r.generated >= spec.max_tokens) return finish(r, FinishReason::kLength);
  // The sampled token would need one more cache row.
  if (session_.n_past(r.slot) >= session_.n_ctx()) return finish(r, FinishReason::kLength);
  r.next_input = next;
}

void BatchEngine::finish(Running& r, FinishReason reason, const std::string& error) {
  if (r.done) return;
  r.done = true;
  if (reason == FinishReason::kLength || (reason == FinishReason::kStop && !r.stop->stopped())) {
    // Text held back for a possible multi-byte character or stop string is the reply's end.
    std::string rest = r.stop->push(r.detokenizer->finish());
    rest += r.stop->flush();
    if (!rest.empty()) r.job->append(rest, r.generated);
  }
  if (reason == FinishReason::kCancelled) metrics_.count_cancelled();
  r.job->finish(reason, r.generated, error);
}

void BatchEngine::release_finished() {
  std::erase_if(running_, [&](const std::unique_ptr<Running>& r) {
    if (!r->done) return false;
    free_slots_.push_back(r->slot);
    return true;
  });
}

void BatchEngine::publish_gauges() {
  metrics_.set_queue_depth(static_cast<int64_t>(queue_.size()));
  metrics_.set_slots_in_use(static_cast<int64_t>(running_.size()));
}

}  // namespace gguflow::server
