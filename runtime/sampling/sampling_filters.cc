#include "runtime/sampling/sampling_filters.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "ops/error.h"

namespace gguflow::sampling {

bool better(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

TokenId argmax(std::span<const float> logits) {
  GGUFLOW_CHECK(!logits.empty());
  size_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[best]) best = i;  // strict: ties keep the lower id
  return static_cast<TokenId>(best);
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

void apply_temperature(std::vector<Candidate>& candidates, float temperature) {
  GGUFLOW_CHECK(temperature > 0);
  for (Candidate& c : candidates) c.logit /= temperature;
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
