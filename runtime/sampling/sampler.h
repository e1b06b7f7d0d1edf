// Token sampling from logits: greedy, or a llama.cpp-style chain
//   repetition penalty -> top-k -> top-p -> min-p -> temperature -> draw
// with a seeded generator whose output is the same on every platform (std::mt19937_64 is
// specified bit-exactly; the uniform double is built from its bits, never from
// std::*_distribution, whose algorithms are implementation-defined).
//
//   SamplerConfig config;           // fill from CLI flags or graph attributes
//   config.temperature = 0;         // greedy
//   Sampler sampler(config);
//   for (TokenId id : prompt) sampler.accept(id);   // prompt counts for the repetition penalty
//   TokenId next = sampler.sample(logits);          // also accepted
#pragma once

#include <cstdint>
#include <deque>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "runtime/sampling/sampling_filters.h"

namespace gguflow::sampling {

// Defaults are llama.cpp's (common/common.h).
struct SamplerConfig {
  float temperature = 0.8f;     // <= 0: greedy (argmax, ties to the lowest id)
  int top_k = 40;               // <= 0: off
  float top_p = 0.95f;          // >= 1: off
  float min_p = 0.05f;          // <= 0: off
  float repeat_penalty = 1.0f;  // 1: off
  int repeat_last_n = 64;       // how many recent tokens the penalty looks at (0: none)
  uint64_t seed = 0;

  bool greedy() const { return temperature <= 0.0f; }
  // Throws gguflow::Error naming the field, its allowed range and the value found.
  void validate() const;
  // "temp=0.80 top_k=40 top_p=0.95 min_p=0.05 repeat_penalty=1.00/64 seed=0" (for --json, logs).
  std::string describe() const;
};

// A fresh seed from std::random_device for a run that was given none. Below 2^63: the seed is
// printed so that the run can be repeated, and every way of giving one back (`run --seed`, a
// graph's `sampler: seed`, Python's seed=, the server's `seed`) takes an integer in 0..2^63-1.
uint64_t draw_seed();

class Sampler {
 public:
  explicit Sampler(SamplerConfig config);  // validates

  // Chooses the next token from `logits` ([n_vocab]) and accepts it into the history. `banned`
  // ids are never chosen: the result is that of logits with them at -infinity (a server's
  // ignore_eos), without copying the logits.
  TokenId sample(std::span<const float> logits, std::span<const TokenId> banned = {});
  // Adds a token (e.g. of the prompt) to the repetition-penalty history.
  void accept(TokenId id);
  // Clears the history and re-seeds the generator.
  void reset();

  const SamplerConfig& config() const { return config_; }

 private:
  // A double in [0, 1) from the top 53 bits of one generator output.
  double next_uniform();

  SamplerConfig config_;
  std::mt19937_64 rng_;
  std::deque<TokenId> recent_;          // the last repeat_last_n accepted tokens
  std::vector<float> penalized_;        // [n_vocab] scratch copy of the logits
  std::vector<Candidate> candidates_;   // [n_vocab] scratch
};

}  // namespace gguflow::sampling
