#include "runtime/sampling/sampler.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "ops/error.h"

namespace gguflow::sampling {

uint64_t draw_seed() {
  std::random_device device;
  return ((static_cast<uint64_t>(device()) << 32) | device()) >> 1;
}

namespace {

// The shortest text that reads back as `value`: six significant digits printed 1.0000001 as "1",
// an error that said "expected a value in (0, 1], found 1".
std::string exact(float value) {
  char text[32];
  const auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  return ec == std::errc() ? std::string(text, end) : std::to_string(value);
}

}  // namespace

void SamplerConfig::validate() const {
  if (!(temperature >= 0.0f))  // also rejects NaN
    throw error("sampler: temperature: expected >= 0 (0 = greedy), found ", exact(temperature));
  if (top_k < 0) throw error("sampler: top_k: expected >= 0 (0 = off), found ", top_k);
  if (!(top_p > 0.0f && top_p <= 1.0f))
    throw error("sampler: top_p: expected a value in (0, 1] (1 = off), found ", exact(top_p));
  if (!(min_p >= 0.0f && min_p <= 1.0f))
    throw error("sampler: min_p: expected a value in [0, 1] (0 = off), found ", exact(min_p));
  if (!(repeat_penalty > 0.0f))
    throw error("sampler: repeat_penalty: expected > 0 (1 = off), found ", exact(repeat_penalty));
  if (repeat_last_n < 0)
    throw error("sampler: repeat_last_n: expected >= 0, found ", repeat_last_n);
}

std::string SamplerConfig::describe() const {
  char text[160];
  std::snprintf(text, sizeof text,
                "temp=%.2f top_k=%d top_p=%.2f min_p=%.2f repeat_penalty=%.2f/%d seed=%llu",
                temperature, top_k, top_p, min_p, repeat_penalty, repeat_last_n,
                static_cast<unsigned long long>(seed));
  return text;
}

Sampler::Sampler(SamplerConfig config) : config_(config), rng_(config.seed) { config_.validate(); }

void Sampler::reset() {
  recent_.clear();
  rng_.seed(config_.seed);
}

void Sampler::accept(TokenId id) {
  if (config_.repeat_last_n <= 0) return;
  recent_.push_back(id);
  while (recent_.size() > static_cast<size_t>(config_.repeat_last_n)) recent_.pop_front();
}

double Sampler::next_uniform() {
  return static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0);  // / 2^53
}

TokenId Sampler::sample(std::span<const float> logits, std::span<const TokenId> banned) {
  GGUFLOW_CHECK(!logits.empty());
  refuse_nan_logits(logits);
  const auto is_banned = [&](TokenId id) { return std::find(banned.begin(), banned.end(), id) != banned.end(); };
  // `scores` with every banned id at -infinity, in penalized_.
  const auto mask_banned = [&](std::span<const float> scores) {
    if (scores.data() != penalized_.data()) penalized_.assign(scores.begin(), scores.end());
    for (TokenId id : banned)
      if (id >= 0 && static_cast<size_t>(id) < penalized_.size()) penalized_[id] = -std::numeric_limits<float>::infinity();
    return std::span<const float>(penalized_);
  };
  std::span<const float> scores = logits;
  if (config_.repeat_penalty != 1.0f && !recent_.empty()) {
    penalized_.assign(logits.begin(), logits.end());
    const std::vector<TokenId> recent(recent_.begin(), recent_.end());
    apply_repetition_penalty(penalized_, recent, config_.repeat_penalty);
    scores = penalized_;
  }

  TokenId chosen;
  if (config_.greedy()) {
    // Masking only lowers banned ids, so the unmasked argmax stands unless it is one of them.
    chosen = argmax(scores);
    if (is_banned(chosen)) chosen = argmax(mask_banned(scores));
  } else {
    if (!banned.empty()) scores = mask_banned(scores);
    candidates_.resize(scores.size());
    for (size_t i = 0; i < scores.size(); ++i)
      candidates_[i] = Candidate{static_cast<TokenId>(i), scores[i], 0.0f};
    keep_top_k(candidates_, config_.top_k);
    keep_top_p(candidates_, config_.top_p);
    keep_min_p(candidates_, config_.min_p);
    apply_temperature(candidates_, config_.temperature);
    chosen = pick(candidates_, next_uniform());
  }
  accept(chosen);
  return chosen;
}

}  // namespace gguflow::sampling
