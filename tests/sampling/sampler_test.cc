// Sampler tests on small hand-computed distributions.
#include "runtime/sampling/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>

#include "ops/error.h"

namespace gguflow::sampling {
namespace {

// Logits whose softmax is exactly `probs` (log p).
std::vector<float> logits_of(std::initializer_list<double> probs) {
  std::vector<float> logits;
  for (double p : probs) logits.push_back(static_cast<float>(std::log(p)));
  return logits;
}

std::vector<Candidate> candidates_of(const std::vector<float>& logits) {
  std::vector<Candidate> c;
  for (size_t i = 0; i < logits.size(); ++i) c.push_back({static_cast<TokenId>(i), logits[i], 0});
  return c;
}

std::vector<TokenId> ids_of(const std::vector<Candidate>& c) {
  std::vector<TokenId> ids;
  for (const Candidate& x : c) ids.push_back(x.id);
  return ids;
}

std::vector<float> random_logits(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<float> logits(n);
  for (float& x : logits) x = static_cast<float>(gen() % 2000) / 100.0f - 10.0f;
  return logits;
}

TEST(Argmax, PicksTheLargestAndTiesGoToTheLowestId) {
  EXPECT_EQ(argmax(std::vector<float>{0.1f, 3.0f, -1.0f, 2.9f}), 1);
  EXPECT_EQ(argmax(std::vector<float>{1.0f, 5.0f, 5.0f, 5.0f}), 1);
}

// The one-pass loop argmax replaced (vector lanes, then the first index of the maximum).
TokenId scalar_argmax(const std::vector<float>& x) {
  size_t best = 0;
  for (size_t i = 1; i < x.size(); ++i)
    if (x[i] > x[best]) best = i;
  return static_cast<TokenId>(best);
}

TEST(Argmax, EqualsTheScalarLoopAtEveryLengthWithTiesZerosInfinitiesAndNans) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::mt19937 gen(7);
  for (size_t n = 1; n <= 70; ++n)
    for (int trial = 0; trial < 40; ++trial) {
      // Few distinct values, so that the maximum is often tied, in a lane and across lanes.
      std::vector<float> x(n);
      for (float& v : x) v = static_cast<float>(gen() % 5) - 2.0f;
      const size_t at = gen() % n;
      switch (trial % 8) {
        case 1: x[at] = -0.0f; break;  // equals +0.0: ties go to the lower index either way
        case 2: x[at] = inf; break;
        case 3: std::fill(x.begin(), x.end(), -inf); break;
        case 4: x[at] = nan; break;    // never chosen
        case 5: x[0] = nan; break;     // the scalar loop then answered 0
        case 6: x[n - 1] = 9.0f; break;  // the tail after the vector lanes
        default: break;
      }
      EXPECT_EQ(argmax(x), scalar_argmax(x)) << "n " << n << " trial " << trial;
    }
  EXPECT_EQ(argmax(random_logits(151936, 3)), scalar_argmax(random_logits(151936, 3)));
}

TEST(Sampler, GreedyPicksTheArgmax) {
  Sampler sampler(SamplerConfig{.temperature = 0.0f});
  for (uint32_t seed = 0; seed < 20; ++seed) {
    const auto logits = random_logits(300, seed);
    EXPECT_EQ(sampler.sample(logits), argmax(logits));
  }
}

// Banned ids (a server's ignore_eos) give what the logits with them at -infinity give, greedy
// (the banned id the best or not) and seeded, with and without the repetition penalty.
TEST(Sampler, BannedIdsActAsMinusInfinity) {
  for (float temperature : {0.0f, 0.9f})
    for (float penalty : {1.0f, 1.3f})
      for (uint32_t seed = 0; seed < 12; ++seed) {
        auto logits = random_logits(300, seed + 500);
        const TokenId top = argmax(logits);
        const std::vector<TokenId> banned = {seed % 2 ? top : TokenId{7}, 299, 4000};  // 4000: not a logit
        std::vector<float> masked = logits;
        masked[banned[0]] = masked[299] = -std::numeric_limits<float>::infinity();
        const SamplerConfig config{.temperature = temperature, .repeat_penalty = penalty, .seed = seed};
        Sampler with_banned(config), with_mask(config);
        for (TokenId id : {3, 5, top}) with_banned.accept(id), with_mask.accept(id);
        for (int step = 0; step < 5; ++step) {
          const TokenId got = with_banned.sample(logits, banned);
          EXPECT_EQ(got, with_mask.sample(masked)) << "temperature " << temperature << " seed " << seed;
          EXPECT_NE(got, banned[0]);
        }
      }
}

TEST(Sampler, TopKOneEqualsGreedy) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    Sampler sampler(SamplerConfig{.temperature = 1.5f, .top_k = 1, .seed = seed});
    const auto logits = random_logits(300, static_cast<uint32_t>(seed) + 100);
    EXPECT_EQ(sampler.sample(logits), argmax(logits));
  }
}

std::vector<TokenId> draw(uint64_t seed, int n) {
  Sampler sampler(SamplerConfig{.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f,
                                .seed = seed});
  const auto logits = random_logits(50, 7);
  std::vector<float> flat(50, 0.0f);  // uniform: every draw is informative
  std::vector<TokenId> ids;
  for (int i = 0; i < n; ++i) ids.push_back(sampler.sample(i % 2 ? logits : flat));
  return ids;
}

TEST(Sampler, SameSeedGivesTheSameSequence) { EXPECT_EQ(draw(42, 64), draw(42, 64)); }

TEST(Sampler, DifferentSeedsDiffer) { EXPECT_NE(draw(42, 64), draw(43, 64)); }

TEST(Sampler, ResetReplaysTheSequence) {
  Sampler sampler(SamplerConfig{.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f,
                                .seed = 9});
  const std::vector<float> flat(100, 0.0f);
  std::vector<TokenId> first, second;
  for (int i = 0; i < 16; ++i) first.push_back(sampler.sample(flat));
  sampler.reset();
  for (int i = 0; i < 16; ++i) second.push_back(sampler.sample(flat));
  EXPECT_EQ(first, second);
}

TEST(Sampler, DrawFrequenciesFollowTheDistribution) {
  Sampler sampler(SamplerConfig{.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f,
                                .seed = 1});
  const auto logits = logits_of({0.5, 0.3, 0.2});
  std::vector<int> counts(3, 0);
  const int n = 20000;
  for (int i = 0; i < n; ++i) ++counts[sampler.sample(logits)];
  EXPECT_NEAR(counts[0] / double(n), 0.5, 0.02);
  EXPECT_NEAR(counts[1] / double(n), 0.3, 0.02);
  EXPECT_NEAR(counts[2] / double(n), 0.2, 0.02);
}

TEST(Filters, SoftmaxOfLogProbabilitiesGivesThemBack) {
  auto c = candidates_of(logits_of({0.1, 0.6, 0.3}));
  softmax(c);
  EXPECT_EQ(ids_of(c), (std::vector<TokenId>{1, 2, 0}));
  EXPECT_NEAR(c[0].prob, 0.6, 1e-6);
  EXPECT_NEAR(c[2].prob, 0.1, 1e-6);
}

TEST(Filters, TopKKeepsTheKBest) {
  auto c = candidates_of({1.0f, 4.0f, 3.0f, 4.0f, 0.0f});
  keep_top_k(c, 3);
  EXPECT_EQ(ids_of(c), (std::vector<TokenId>{1, 3, 2}));  // equal logits: lower id first
}

TEST(Filters, TopPKeepsTheSmallestPrefixReachingP) {
  // probabilities 0.5, 0.3, 0.15, 0.05: cumulative 0.5, 0.8, 0.95, 1.0
  auto c = candidates_of(logits_of({0.15, 0.5, 0.05, 0.3}));
  keep_top_p(c, 0.75f);
  EXPECT_EQ(ids_of(c), (std::vector<TokenId>{1, 3}));
  c = candidates_of(logits_of({0.15, 0.5, 0.05, 0.3}));
  keep_top_p(c, 0.85f);
  EXPECT_EQ(ids_of(c), (std::vector<TokenId>{1, 3, 0}));
  c = candidates_of(logits_of({0.15, 0.5, 0.05, 0.3}));
  keep_top_p(c, 0.4f);
  EXPECT_EQ(ids_of(c), (std::vector<TokenId>{1}));
}

TEST(Filters, MinPKeepsTokensAboveAFractionOfTheBest) {
  // best 0.5: min_p 0.2 -> threshold 0.1 drops 0.05; min_p 0.7 -> threshold 0.35 keeps 0.5 only
  auto c = candidates_of(logits_of({0.15, 0.5, 0.05, 0.3}));
  keep_min_p(c, 0.2f);
  EXPECT_EQ(ids_of(c), (std::vector<TokenId>{1, 3, 0}));
  c = candidates_of(logits_of({0.15, 0.5, 0.05, 0.3}));
  keep_min_p(c, 0.7f);
  EXPECT_EQ(ids_of(c), (std::vector<TokenId>{1}));
}

TEST(Filters, RepetitionPenaltyDividesPositiveAndMultipliesNegativeLogitsOnce) {
  std::vector<float> logits = {2.0f, -2.0f, 1.0f, 3.0f};
  const std::vector<TokenId> recent = {0, 1, 0, 99};  // 0 twice, 99 out of range
  apply_repetition_penalty(logits, recent, 2.0f);
  EXPECT_EQ(logits, (std::vector<float>{1.0f, -4.0f, 1.0f, 3.0f}));
}

TEST(Sampler, RepetitionPenaltyChangesTheGreedyChoice) {
  Sampler sampler(SamplerConfig{.temperature = 0.0f, .repeat_penalty = 2.0f, .repeat_last_n = 4});
  const std::vector<float> logits = {3.0f, 2.0f};
  EXPECT_EQ(sampler.sample(logits), 0);  // no history yet
  EXPECT_EQ(sampler.sample(logits), 1);  // 3/2 < 2
}

// A tiny temperature is near-greedy: logit / T overflowed to +inf for every large logit, softmax
// turned inf - inf into nan and the least likely candidate was picked.
TEST(Sampler, TinyTemperaturesPickTheBest) {
  const std::vector<float> logits = {1.0f, 5.0f, 4.9f, -3.0f, 0.5f};
  for (float temperature : {1e-38f, 1e-45f, 1e-30f, 1e-6f})
    for (uint64_t seed : {1u, 2u, 3u}) {
      Sampler sampler(SamplerConfig{.temperature = temperature, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f, .seed = seed});
      EXPECT_EQ(sampler.sample(logits), 1) << "temperature " << temperature << " seed " << seed;
    }
}

// A repetition penalty near 0 overflows the repeated positive logits to +inf: they share the
// draw (never nan, never a token outside them).
TEST(Sampler, InfiniteLogitsShareTheDraw) {
  const std::vector<float> logits = {1.0f, 5.0f, 4.0f, -3.0f};
  std::set<TokenId> seen;
  for (uint64_t seed = 0; seed < 64; ++seed) {
    Sampler sampler(SamplerConfig{.temperature = 1.0f, .top_k = 0, .top_p = 0.9f, .min_p = 0.0f,
                                  .repeat_penalty = 1e-45f, .repeat_last_n = 4, .seed = seed});
    sampler.accept(1);
    sampler.accept(2);
    seen.insert(sampler.sample(logits));
  }
  EXPECT_EQ(seen, (std::set<TokenId>{1, 2}));
}

TEST(SamplerConfig, RejectsOutOfRangeValues) {
  EXPECT_THROW(Sampler(SamplerConfig{.temperature = -1.0f}), Error);
  EXPECT_THROW(Sampler(SamplerConfig{.top_p = 0.0f}), Error);
  EXPECT_THROW(Sampler(SamplerConfig{.min_p = 1.5f}), Error);
  EXPECT_THROW(Sampler(SamplerConfig{.repeat_penalty = 0.0f}), Error);
  EXPECT_NO_THROW(Sampler(SamplerConfig{}));
}

}  // namespace
}  // namespace gguflow::sampling
