// Text generation on a Session: prefill the prompt ids, then sample, stream and feed back one
// token at a time until end-of-generation, the token limit or the context limit.
//
//   Generator gen(session, tokenizer, sampler);
//   GenerationResult r = gen.generate(prompt_ids, 64, [](std::string_view s) { ...print... });
//
// Text is streamed through a StreamingDetokenizer fed with the prompt first (so the first
// generated word keeps or drops its leading space exactly as a whole-sequence decode would),
// and reaches `on_text` in whole UTF-8 characters.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/sampling/sampler.h"
#include "runtime/tokenizer/tokenizer.h"

namespace gguflow::runner {

enum class StopReason {
  kEndOfGeneration,  // the model chose EOS/EOT (not printed, not in `ids`)
  kTokenLimit,       // n_predict tokens generated (also for n_predict == 0)
  kContextFull,      // the KV cache has no slot left for the next token
};
const char* stop_reason_name(StopReason reason);  // "eos", "n_predict", "context"

struct GenerationResult {
  std::vector<TokenId> prompt_ids;  // as evaluated
  std::vector<TokenId> ids;         // generated, in order
  std::string prompt_text;          // the prompt ids detokenized (what an echo prints)
  std::string text;                 // the generated ids detokenized
  StopReason stop = StopReason::kTokenLimit;
  double prompt_seconds = 0;        // prefill of the prompt
  double generate_seconds = 0;      // sampling and decoding of the generated tokens
};

struct GenerateOptions {
  int64_t n_predict = -1;     // tokens to generate at most; < 0: until EOS or the context is full
  bool echo_prompt = false;   // also pass the prompt's text to on_text first
  // --context-shift: when the context is full, keep the first `keep` tokens (and BOS before
  // them), drop the oldest half of the rest and go on, as llama.cpp does. The kept tokens are
  // evaluated again into a fresh cache rather than re-roped in place: a graph's caches hold
  // whatever its ops wrote (rope with per-layer bases and scaling, low-rank projections,
  // sliding-window rings), and re-evaluating is exact for every graph. Costs one prefill of
  // about half the context per shift, i.e. per half a context of generated tokens.
  bool context_shift = false;
  int64_t keep = 0;
};

class Generator {
 public:
  // All three must outlive the generator. The sampler's history is not reset here: prompt ids
  // are accepted into it (they count for the repetition penalty, as in llama.cpp).
  Generator(exec::Session& session, const Tokenizer& tokenizer, sampling::Sampler& sampler);

  // Appends `prompt` to the session (whatever it already holds stays: chat turns, after the
  // previous call's last token when that one was not evaluated yet) and
  // generates. `on_text` receives text as soon as it is whole. Throws gguflow::Error when the
  // prompt is empty, holds an id outside the vocabulary, or does not fit in the context (naming
  // the counts); nothing is evaluated then.
  GenerationResult generate(std::span<const TokenId> prompt, const GenerateOptions& options,
                            const std::function<void(std::string_view)>& on_text = {});
  // Call after Session::reset(): forgets the token generate() left unevaluated.
  void reset() {
    pending_ = kNoToken;
    history_.clear();
  }
  // Context shifts done so far (GenerateOptions::context_shift).
  int64_t context_shifts() const { return context_shifts_; }

 private:
  exec::Session& session_;
  const Tokenizer& tokenizer_;
  sampling::Sampler& sampler_;
  // The last generated token when generation stopped at the token limit: chosen and printed
  // but not yet evaluated. The next generate() evaluates it before its prompt (chat turns).
  TokenId pending_ = kNoToken;
  // Every token evaluated in the session since the last reset, in order: what a context shift
  // evaluates again.
  std::vector<TokenId> history_;
  int64_t context_shifts_ = 0;

  // Drops the oldest half of history_ after the kept prefix, re-evaluates what is left followed
  // by `next`, and returns the logits after `next`.
  std::span<const float> shift_context(TokenId next, const GenerateOptions& options);
};

}  // namespace gguflow::runner
