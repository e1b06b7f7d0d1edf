// The steps of a sampling chain, as pure functions over a candidate list, with llama.cpp's
// semantics (src/llama-sampling.cpp). Each keeps at least one candidate.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace gguflow::sampling {

using TokenId = int32_t;

struct Candidate {
  TokenId id;
  float logit;
  float prob;  // valid after softmax()
};

// Ordering used everywhere: higher logit first, equal logits by lower id (deterministic).
bool better(const Candidate& a, const Candidate& b);

// Index of the largest logit; ties go to the lowest id. `logits` must not be empty.
TokenId argmax(std::span<const float> logits);

// Throws gguflow::Error when a logit is nan. nan compares false both ways: argmax and the
// filters would choose an arbitrary token (token 0 for all-nan logits) and a run would go on as
// if nothing were wrong.
void refuse_nan_logits(std::span<const float> logits);

// llama.cpp's repetition penalty: every distinct token among `recent` has its logit divided by
// `penalty` when positive and multiplied by it when negative (penalty 1 = off).
void apply_repetition_penalty(std::span<float> logits, std::span<const TokenId> recent,
                              float penalty);

// Sorts by `better` and sets `prob` = softmax of the logits (max-subtracted, in double).
void softmax(std::vector<Candidate>& candidates);

// Keeps the `k` best (k <= 0 or k >= size: all); leaves them sorted.
void keep_top_k(std::vector<Candidate>& candidates, int k);
// Nucleus: keeps the smallest best-first prefix whose probability mass reaches `p`
// (p >= 1: all). Recomputes softmax over the current candidates first.
void keep_top_p(std::vector<Candidate>& candidates, float p);
// Keeps candidates whose probability is at least `min_p` times the best one's (min_p <= 0: all).
void keep_min_p(std::vector<Candidate>& candidates, float min_p);
// Divides logits by `temperature` (> 0).
void apply_temperature(std::vector<Candidate>& candidates, float temperature);

// Picks from the softmax of the candidates with `uniform` in [0, 1): the first candidate (best
// first) whose cumulative probability exceeds uniform * total.
TokenId pick(std::vector<Candidate>& candidates, double uniform);

}  // namespace gguflow::sampling
