#include "ops/attention.h"

#include <gtest/gtest.h>

#include "ops/op_registry.h"
#include "tests/ops/op_harness.h"
#include "tests/ops/op_test_util.h"
#include "tests/ops/test_kernels.h"

namespace gguflow {
namespace {

// Causal grouped-query attention in double: token t (position t) attends to keys j <= t, and
// with a window W only to those with t - j < W (the mask); score = scale * q.k, soft-capped to
// cap * tanh(score / cap) when cap > 0. scale 0 is 1/sqrt(head_dim). Not causal: token t
// attends to the keys of positions 0..seen[t]-1 (seen empty: all n_tokens).
std::vector<double> attention_reference(const ops::AttentionShape& s, const std::vector<float>& q,
                                        const std::vector<float>& kk, const std::vector<float>& v,
                                        int64_t n_tokens, double scale = 0, double cap = 0,
                                        int64_t window = 0, bool causal = true,
                                        const std::vector<int64_t>& seen = {}) {
  const int64_t hd = s.head_dim, group = s.n_head / s.n_kv_head;
  if (scale == 0) scale = 1 / std::sqrt(double(hd));
  std::vector<double> out(n_tokens * s.q_row());
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t h = 0; h < s.n_head; ++h) {
      const int64_t kvh = h / group;
      const int64_t last = causal ? t : (seen.empty() ? n_tokens : seen[t]) - 1;
      std::vector<double> w(last + 1);
      double mx = -1e300, sum = 0;
      for (int64_t j = 0; j <= last; ++j) {
        double d = 0;
        for (int64_t i = 0; i < hd; ++i)
          d += double(q[t * s.q_row() + h * hd + i]) * kk[j * s.kv_row() + kvh * hd + i];
        w[j] = d * scale;
        if (cap > 0) w[j] = cap * std::tanh(w[j] / cap);
        if (window > 0 && t - j >= window) w[j] = -INFINITY;
        mx = std::max(mx, w[j]);
      }
      for (auto& x : w) sum += (x = std::exp(x - mx));
      for (int64_t i = 0; i < hd; ++i) {
        double o = 0;
        for (int64_t j = 0; j <= last; ++j) o += w[j] / sum * v[j * s.kv_row() + kvh * hd + i];
        out[t * s.q_row() + h * hd + i] = o;
      }
    }
  return out;
}

// Runs attention_heads over tokens at positions 0..n_tokens-1: the first `prefill` as one batch,
// then one token per step (decode), each step's heads split in two ranges as two threads would.
std::vector<float> run_attention(const ops::AttentionShape& s, const ops::AttentionScoring& scoring,
                                 const std::vector<float>& q, const std::vector<float>& kk,
                                 const std::vector<float>& v, int64_t n_tokens, int64_t prefill,
                                 int64_t n_ctx) {
  std::vector<float> kc(n_ctx * s.kv_row(), 1e30f), vc(n_ctx * s.kv_row(), 1e30f);
  const ops::KvCacheView cache = ops::KvCacheView::f32(kc.data(), vc.data(), n_ctx, s.kv_row(), s.kv_row());
  std::vector<int32_t> pos(n_tokens);
  for (int64_t t = 0; t < n_tokens; ++t) pos[t] = static_cast<int32_t>(t);
  const auto& k = test::scalar_f32_test_kernels();
  std::vector<float> out(n_tokens * s.q_row()), scores(ops::attention_scratch_floats(s, n_ctx, cache));
  ops::kv_cache_store(k, s, kk.data(), v.data(), pos.data(), prefill, cache);
  ops::attention_heads(k, s, scoring, q.data(), pos.data(), prefill, cache, 0,
                       prefill * s.n_head, n_ctx, scores.data(), out.data());
  for (int64_t t = prefill; t < n_tokens; ++t) {
    ops::kv_cache_store(k, s, kk.data() + t * s.kv_row(), v.data() + t * s.kv_row(), &pos[t], 1,
                        cache);
    const float* qt = q.data() + t * s.q_row();
    float* ot = out.data() + t * s.q_row();
    ops::attention_heads(k, s, scoring, qt, &pos[t], t + 1, cache, 0, s.n_head / 2,
                         n_ctx, scores.data(), ot);
    ops::attention_heads(k, s, scoring, qt, &pos[t], t + 1, cache, s.n_head / 2, s.n_head,
                         n_ctx, scores.data(), ot);
  }
  return out;
}

TEST(AttentionOp, GroupedQueryCausalMatchesDoubleReference) {
  const ops::AttentionShape s{/*n_head=*/6, /*n_kv_head=*/2, /*head_dim=*/8};
  const int64_t n_tokens = 5, n_ctx = 16;
  const auto q = test::random_floats(n_tokens * s.q_row(), 8);
  const auto kk = test::random_floats(n_tokens * s.kv_row(), 9);
  const auto v = test::random_floats(n_tokens * s.kv_row(), 10);
  // Prefill the first 3 tokens as a batch, then the last 2 one at a time (decode).
  const auto out = run_attention(s, {}, q, kk, v, n_tokens, 3, n_ctx);
  test::expect_close(out, attention_reference(s, q, kk, v, n_tokens), 1e-5, 1e-5);
}

// scale 0 means 1.0f / sqrt(float(head_dim)), the factor computed before the attribute existed:
// passing that factor explicitly gives the same bits.
TEST(AttentionOp, DefaultScaleIsTheOldFactorBitForBit) {
  const ops::AttentionShape s{4, 2, 24};
  const int64_t n_tokens = 7;
  const auto q = test::random_floats(n_tokens * s.q_row(), 1);
  const auto kk = test::random_floats(n_tokens * s.kv_row(), 2);
  const auto v = test::random_floats(n_tokens * s.kv_row(), 3);
  ops::AttentionScoring explicit_scale;
  explicit_scale.scale = 1.0f / std::sqrt(24.0f);
  EXPECT_EQ(run_attention(s, {}, q, kk, v, n_tokens, 4, 8),
            run_attention(s, explicit_scale, q, kk, v, n_tokens, 4, 8));
}

// Positions past the window, a prefill that crosses it and single-token decode steps up to a
// late position: each query sees only its last `window` keys.
TEST(AttentionOp, SlidingWindowMasksKeysAtOrPastTheWindow) {
  const ops::AttentionShape s{4, 2, 8};
  const int64_t n_tokens = 24, window = 5;
  const auto q = test::random_floats(n_tokens * s.q_row(), 11);
  const auto kk = test::random_floats(n_tokens * s.kv_row(), 12);
  const auto v = test::random_floats(n_tokens * s.kv_row(), 13);
  ops::AttentionScoring scoring;
  scoring.window = window;
  const auto want = attention_reference(s, q, kk, v, n_tokens, 0, 0, window);
  test::expect_close(run_attention(s, scoring, q, kk, v, n_tokens, 9, 32), want, 1e-5, 1e-5);
  // Window 1: each position sees only itself, so the output is its own value row.
  scoring.window = 1;
  const auto self = run_attention(s, scoring, q, kk, v, n_tokens, 3, 32);
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t h = 0; h < s.n_head; ++h)
      for (int64_t i = 0; i < s.head_dim; ++i)
        ASSERT_FLOAT_EQ(self[t * s.q_row() + h * s.head_dim + i],
                        v[t * s.kv_row() + (h / 2) * s.head_dim + i]);
  // A window as long as the sequence is plain causal attention.
  scoring.window = n_tokens;
  test::expect_close(run_attention(s, scoring, q, kk, v, n_tokens, 9, 32),
                     attention_reference(s, q, kk, v, n_tokens), 1e-5, 1e-5);
}

// Encoders: causal false. One step of the whole sequence: every token attends to every token,
// later ones included. A prefill of 4 then single tokens: each step's queries see everything
// stored so far (positions 0..4 for the first four, then 0..t).
TEST(AttentionOp, NonCausalSeesTheWholeSequenceSoFar) {
  const ops::AttentionShape s{4, 2, 16};
  const int64_t n_tokens = 9;
  const auto q = test::random_floats(n_tokens * s.q_row(), 31, 0.0f, 2.0f);
  const auto kk = test::random_floats(n_tokens * s.kv_row(), 32, 0.0f, 2.0f);
  const auto v = test::random_floats(n_tokens * s.kv_row(), 33);
  ops::AttentionScoring scoring;
  scoring.causal = false;
  const auto whole = run_attention(s, scoring, q, kk, v, n_tokens, n_tokens, 16);
  test::expect_close(whole, attention_reference(s, q, kk, v, n_tokens, 0, 0, 0, false), 1e-5, 1e-5);
  std::vector<int64_t> seen(n_tokens);
  for (int64_t t = 0; t < n_tokens; ++t) seen[t] = std::max<int64_t>(4, t + 1);
  test::expect_close(run_attention(s, scoring, q, kk, v, n_tokens, 4, 16),
                     attention_reference(s, q, kk, v, n_tokens, 0, 0, 0, false, seen), 1e-5, 1e-5);
  // The first token sees the later ones: its output differs from causal attention's.
  const auto causal = run_attention(s, {}, q, kk, v, n_tokens, n_tokens, 16);
  EXPECT_NE(std::vector<float>(whole.begin(), whole.begin() + s.q_row()),
            std::vector<float>(causal.begin(), causal.begin() + s.q_row()));
}

// gemma2: softmax(c * tanh(scale * q.k / c) + mask); large scores so the cap matters.
// A windowed layer's cache as a ring of window + (tokens of a step) - 1 rows: position p in row
// p % rows. A 9-token prefill (rows = 5 + 9 - 1 = 13) then decode steps to position 23 wrap the
// ring; the results are the bits of a cache with one row per position.
TEST(AttentionOp, SlidingWindowRingGivesTheFullCachesBits) {
  const ops::AttentionShape s{4, 2, 8};
  const int64_t n_tokens = 24, window = 5, prefill = 9;
  const auto q = test::random_floats(n_tokens * s.q_row(), 21);
  const auto kk = test::random_floats(n_tokens * s.kv_row(), 22);
  const auto v = test::random_floats(n_tokens * s.kv_row(), 23);
  ops::AttentionScoring scoring;
  scoring.window = window;
  const auto full = run_attention(s, scoring, q, kk, v, n_tokens, prefill, 32);
  EXPECT_EQ(run_attention(s, scoring, q, kk, v, n_tokens, prefill, window + prefill - 1), full);
  // Token-by-token decode needs only the window itself.
  EXPECT_EQ(run_attention(s, scoring, q, kk, v, n_tokens, 1, window),
            run_attention(s, scoring, q, kk, v, n_tokens, 1, 32));
}

TEST(AttentionOp, SoftcapAndExplicitScaleMatchDoubleReference) {
  const ops::AttentionShape s{4, 2, 24};
  const int64_t n_tokens = 20;
  const auto q = test::random_floats(n_tokens * s.q_row(), 21, 0.0f, 3.0f);
  const auto kk = test::random_floats(n_tokens * s.kv_row(), 22, 0.0f, 3.0f);
  const auto v = test::random_floats(n_tokens * s.kv_row(), 23);
  ops::AttentionScoring scoring;
  scoring.scale = 0.3f;
  test::expect_close(run_attention(s, scoring, q, kk, v, n_tokens, 6, 32),
                     attention_reference(s, q, kk, v, n_tokens, 0.3f), 1e-5, 1e-5);
  scoring.softcap = 4.0f;
  test::expect_close(run_attention(s, scoring, q, kk, v, n_tokens, 6, 32),
                     attention_reference(s, q, kk, v, n_tokens, 0.3f, 4.0), 1e-5, 1e-5);
  scoring.window = 6;  // all three together, as a gemma2 sliding layer
  test::expect_close(run_attention(s, scoring, q, kk, v, n_tokens, 6, 32),
                     attention_reference(s, q, kk, v, n_tokens, 0.3f, 4.0, 6), 1e-5, 1e-5);
}

// kv_project shares attention's attributes but not its scoring: it refuses the new ones at
// bind time, naming the node, and binds on (here into the test binder's missing weights)
// without them.
TEST(AttentionOp, KvProjectRefusesWindowSoftcapAndScale) {
  auto bind = [](const char* name, ops::AttrValue value) {
    test::OpCase c{"kv_project",
                   {ops::Shape{{64, ops::kTokenDim}}, ops::Shape{{32, ops::kTokenDim}},
                    ops::Shape{{32, ops::kTokenDim}}, ops::Shape{{ops::kTokenDim}}},
                   {ops::Shape{{32, 8}}, ops::Shape{{32}}, ops::Shape{{32, 8}}, ops::Shape{{32}}},
                   {std::vector<float>(256), std::vector<float>(32), std::vector<float>(256),
                    std::vector<float>(32)},
                   {{"n_head", int64_t{4}}, {"n_head_kv", int64_t{2}}, {"cache", std::string("kv")}}};
    if (name) c.attrs.emplace_back(name, std::move(value));
    return test::bind_error(c);
  };
  // With the defaults the op goes on to its weights (F32 views, which the test binder lacks).
  EXPECT_EQ(bind(nullptr, {}), "test binder: f32 weights only");
  for (auto [name, value] : {std::pair<const char*, ops::AttrValue>{"window", int64_t{8}},
                             {"softcap", 50.0}, {"scale", 0.125}, {"causal", false}}) {
    const std::string e = bind(name, value);
    EXPECT_NE(e.find("node 'kv_project' (test): kv_project does plain causal "
                     "attention: expected window, softcap and scale 0"),
              std::string::npos)
        << e;
    EXPECT_NE(e.find(std::string(name) + " " + ops::attr_to_string(value)), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace gguflow
