#include "runtime/server/generation_job.h"

namespace gguflow::server {

const char* finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kCancelled: return "cancelled";
    case FinishReason::kError: return "error";
  }
  return "?";
}

void GenerationJob::append(const std::string& text, int64_t completion_tokens) {
  {
    std::lock_guard lock(mutex_);
    text_ += text;
    completion_tokens_ = completion_tokens;
  }
  changed_.notify_all();
}

void GenerationJob::finish(FinishReason reason, int64_t completion_tokens, std::string error) {
  {
    std::lock_guard lock(mutex_);
    if (finished_) return;
    finished_ = reason;
    completion_tokens_ = completion_tokens;
    error_ = std::move(error);
  }
  changed_.notify_all();
}

JobUpdate GenerationJob::take(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] { return !text_.empty() || (finished_ && !finish_taken_); });
  JobUpdate update;
  update.text.swap(text_);
  if (finished_ && !finish_taken_) {
    update.finished = finished_;
    update.error = error_;
    finish_taken_ = true;
  }
  update.prompt_tokens = static_cast<int64_t>(spec_.prompt.size());
  update.completion_tokens = completion_tokens_;
  return update;
}

}  // namespace gguflow::server
