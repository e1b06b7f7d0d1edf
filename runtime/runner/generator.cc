#include "runtime/runner/generator.h"

#include <algorithm>
#include <chrono>

#include "ops/error.h"
#include "runtime/tokenizer/detokenizer.h"

namespace gguflow::runner {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

const char* stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::kEndOfGeneration: return "eos";
    case StopReason::kTokenLimit: return "n_predict";
    case StopReason::kContextFull: return "context";
  }
  return "?";
}

Generator::Generator(exec::Session& session, const Tokenizer& tokenizer,
                     sampling::Sampler& sampler)
    : session_(session), tokenizer_(tokenizer), sampler_(sampler) {}

GenerationResult Generator::generate(std::span<const TokenId> prompt,
                                     const GenerateOptions& options,
                                     const std::function<void(std::string_view)>& on_text) {
  if (prompt.empty()) throw error("generate: expected at least one prompt token, found none");
  for (TokenId id : prompt) tokenizer_.check_id(id);
  std::vector<TokenId> evaluated;  // [pending?, prompt...]: what the prefill evaluates
  if (pending_ != kNoToken) evaluated.push_back(pending_);
  evaluated.insert(evaluated.end(), prompt.begin(), prompt.end());
  const int64_t free_slots = session_.n_ctx() - session_.n_past();
  if (static_cast<int64_t>(evaluated.size()) > free_slots)
    throw error("prompt: ", evaluated.size(), " tokens do not fit in the context: ",
                session_.n_past(), " of ", session_.n_ctx(), " slots are in use (",
                free_slots, " free); use a shorter prompt or a larger --ctx");

  GenerationResult result;
  result.prompt_ids.assign(prompt.begin(), prompt.end());
  const auto emit = [&](const std::string& text) {
    if (!text.empty() && on_text) on_text(text);
  };

  // The detokenizer sees the prompt first so that spacing continues as in one decode.
  DecodeOptions decode_options;
  decode_options.at_sequence_start = session_.n_past() == 0;
  StreamingDetokenizer detokenizer(tokenizer_, decode_options);
  for (TokenId id : prompt) result.prompt_text += detokenizer.push(id);
  if (options.echo_prompt) emit(result.prompt_text);

  const auto prompt_start = Clock::now();
  std::span<const float> logits = session_.prefill(evaluated);
  history_.insert(history_.end(), evaluated.begin(), evaluated.end());
  pending_ = kNoToken;
  result.prompt_seconds = seconds_since(prompt_start);
  for (TokenId id : prompt) sampler_.accept(id);

  // A padded output (more rows than tokens, as Qwen's 151936 for 151665 tokens) is sampled only
  // over ids the tokenizer can print.
  const size_t n_sampled = std::min(logits.size(), tokenizer_.vocab_size());
  const auto generate_start = Clock::now();
  result.stop = StopReason::kTokenLimit;
  const int64_t limit = options.n_predict;
  while (limit < 0 || static_cast<int64_t>(result.ids.size()) < limit) {
    const TokenId next = sampler_.sample(logits.first(n_sampled));
    if (tokenizer_.vocab().is_end_of_generation(next)) {
      result.stop = StopReason::kEndOfGeneration;
      break;
    }
    result.ids.push_back(next);
    const std::string text = detokenizer.push(next);
    result.text += text;
    emit(text);
    if (limit >= 0 && static_cast<int64_t>(result.ids.size()) >= limit) {
      pending_ = next;
      break;
    }
    if (session_.n_past() >= session_.n_ctx()) {
      if (options.context_shift && session_.n_ctx() > 2) {
        logits = shift_context(next, options);
        continue;
      }
      result.stop = StopReason::kContextFull;
      pending_ = next;  // never fits; a later prompt reports the full context
      break;
    }
    logits = session_.decode(next);
    history_.push_back(next);
  }
  const std::string rest = detokenizer.finish();
  result.text += rest;
  emit(rest);
  result.generate_seconds = seconds_since(generate_start);
  return result;
}

std::span<const float> Generator::shift_context(TokenId next, const GenerateOptions& options) {
  // As llama.cpp: BOS is kept on top of --keep, and half of what follows the kept prefix goes.
  const int64_t n_past = static_cast<int64_t>(history_.size());
  const bool starts_with_bos =
      !history_.empty() && history_.front() == tokenizer_.vocab().bos();
  const int64_t keep = std::clamp<int64_t>(options.keep + (starts_with_bos ? 1 : 0), 0, n_past - 2);
  const int64_t discard = (n_past - keep) / 2;
  history_.erase(history_.begin() + keep, history_.begin() + keep + discard);
  history_.push_back(next);
  session_.reset();
  ++context_shifts_;
  return session_.prefill(history_);
}

}  // namespace gguflow::runner
