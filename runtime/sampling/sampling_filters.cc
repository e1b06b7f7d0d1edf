#include "runtime/sampling/sampling_filters.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_set>

#include "ops/error.h"

namespace gguflow::sampling {

bool better(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// The largest logit in two passes: its value over 16 lanes (GCC vector extensions: SSE2 on
// the baseline build), then the first index holding it, 16 at a time. The one-pass scalar loop compared every
// logit with the best one so far (a load and a branch each): ~130 us for a 151,936-token
// vocabulary, which a server runs once per sequence and step on one thread while the step's
// other threads wait (~1 ms of a 21 ms step of 8 sequences). Same answer as that loop: NaN
// logits never win (x > m is false for them) unless logits[0] is NaN, where it returned 0.
TokenId argmax(std::span<const float> logits) {
  GGUFLOW_CHECK(!logits.empty());
  const float* x = logits.data();
  const size_t n = logits.size();
  if (std::isnan(x[0])) return 0;
  using Lanes = float __attribute__((vector_size(16)));
  constexpr size_t kLanes = 4, kStep = 4 * kLanes;
  float best = x[0];
  size_t i = 0;
  if (n >= kStep) {
    Lanes m[4];
    for (Lanes& v : m) v = Lanes{} + x[0];
    for (; i + kStep <= n; i += kStep)
      for (size_t k = 0; k < 4; ++k) {
        Lanes v;
        std::memcpy(&v, x + i + k * kLanes, sizeof v);
        m[k] = v > m[k] ? v : m[k];
      }
    for (const Lanes& v : m)
      for (size_t l = 0; l < kLanes; ++l) best = std::max(best, v[l]);
  }
  for (; i < n; ++i) best = x[i] > best ? x[i] : best;
  // The first block of kStep holding it, then the element (best is one of the logits).
  size_t at = 0;
  using Mask = int32_t __attribute__((vector_size(16)));
  for (; at + kStep <= n; at += kStep) {
    Mask any{};
    for (size_t k = 0; k < 4; ++k) {
      Lanes v;
      std::memcpy(&v, x + at + k * kLanes, sizeof v);
      any |= v == best;
    }
    if (any[0] | any[1] | any[2] | any[3]) break;
  }
  while (x[at] != best) ++at;
  return static_cast<TokenId>(at);
}

void refuse_nan_logits(std::span<const float> logits) {
  if (std::any_of(logits.begin(), logits.end(), [](float x) { return std::isnan(x); }))
    throw error("the model's logits hold nan: its weights or hyperparameters (a metadata value, a "
                "--set override) are not usable numbers");
}

void apply_repetition_penalty(std::span<float> logits, std::span<const TokenId> recent,
                              float penalty) {
  if (penalty == 1.0f) return;
  std::unordered_set<TokenId> seen;
  for (TokenId id : recent) {
    if (id < 0 || static_cast<size_t>(id) >= logits.size() || !seen.insert(id).second) continue;
    float& logit = logits[id];
    logit = logit <= 0 ? logit * penalty : logit / penalty;
  }
}

void softmax(std::vector<Candidate>& candidates) {
  GGUFLOW_CHECK(!candidates.empty());
  std::sort(candidates.begin(), candidates.end(), better);
  const double max_logit = candidates.front().logit;
  if (std::isinf(max_logit)) {
    // +inf logits (a repetition penalty near 0 overflows a positive logit) share all the mass;
    // all -inf (every candidate banned) share it evenly. exp(inf - inf) would be nan.
    const double tied = static_cast<double>(std::count_if(candidates.begin(), candidates.end(),
                                                          [&](const Candidate& c) { return c.logit == max_logit; }));
    for (Candidate& c : candidates) c.prob = c.logit == max_logit ? static_cast<float>(1.0 / tied) : 0.0f;
    return;
  }
  double sum = 0;
  for (Candidate& c : candidates) {
    const double e = std::exp(static_cast<double>(c.logit) - max_logit);
    c.prob = static_cast<float>(e);
    sum += e;
  }
  for (Candidate& c : candidates) c.prob = static_cast<float>(c.prob / sum);
}

void keep_top_k(std::vector<Candidate>& candidates, int k) {
  if (k <= 0 || static_cast<size_t>(k) >= candidates.size()) {
    std::sort(candidates.begin(), candidates.end(), better);
    return;
  }
  std::partial_sort(candidates.begin(), candidates.begin() + k, candidates.end(), better);
  candidates.resize(k);
}

void keep_top_p(std::vector<Candidate>& candidates, float p) {
  if (p >= 1.0f || candidates.empty()) return;
  softmax(candidates);
  double cumulative = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    cumulative += candidates[i].prob;
    if (cumulative >= p) {
      candidates.resize(i + 1);
      return;
    }
  }
}

void keep_min_p(std::vector<Candidate>& candidates, float min_p) {
  if (min_p <= 0.0f || candidates.empty()) return;
  // p_i >= min_p * p_max  <=>  logit_i >= logit_max + log(min_p)
  float max_logit = candidates.front().logit;
  for (const Candidate& c : candidates) max_logit = std::max(max_logit, c.logit);
  const float threshold = max_logit + std::log(min_p);
  std::erase_if(candidates, [&](const Candidate& c) { return c.logit < threshold; });
  std::sort(candidates.begin(), candidates.end(), better);
}

// Scaled relative to the largest logit: (logit - max) / T is at most 0, so a tiny temperature
// sends the others to -inf (near-greedy) where logit / T overflowed every large logit to +inf,
// softmax's inf - inf made nan, and pick() fell through to the least likely candidate.
void apply_temperature(std::vector<Candidate>& candidates, float temperature) {
  GGUFLOW_CHECK(temperature > 0);
  if (candidates.empty()) return;
  float max_logit = candidates.front().logit;
  for (const Candidate& c : candidates) max_logit = std::max(max_logit, c.logit);
  if (std::isinf(max_logit)) return;  // +inf or all -inf: softmax shares the mass among the ties
  for (Candidate& c : candidates) c.logit = (c.logit - max_logit) / temperature;
}

TokenId pick(std::vector<Candidate>& candidates, double uniform) {
  softmax(candidates);
  double total = 0;
  for (const Candidate& c : candidates) total += c.prob;
  const double target = uniform * total;
  double cumulative = 0;
  for (const Candidate& c : candidates) {
    cumulative += c.prob;
    if (cumulative > target) return c.id;
  }
  return candidates.back().id;  // rounding left `target` at the very top
}

}  // namespace gguflow::sampling
