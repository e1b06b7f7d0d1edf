// Attention (ops/attention.h) over a KV cache of each element type, through every plugin this
// CPU runs: a prompt stored as one batch, then one token per step, for a full cache and for a
// sliding window's ring (rows wrap), with heads narrower than a block (head_dim 8: a q8_0 block
// spans four heads) and wider (64). Two references in double precision:
//  - attention over the rows as stored (decoded with runtime/quant's reference): equal to float
//    rounding, so attention reads every row of the right position, block and head;
//  - attention over the f32 keys and values: within the bound the stored error implies, with
//    ds = max over keys of scale * |q . (k_stored - k)| and dv = max |v_stored - v|:
//    |out - ref| <= (exp(2 ds) - 1) max|v| + dv (softmax weights move by at most a factor
//    exp(+-ds) each, hence exp(2 ds) - 1 in total variation), plus float rounding.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/attention.h"
#include "runtime/quant/formats.h"
#include "tests/plugins/plugin_test_util.h"

namespace gguflow::test {
namespace {

using ops::KvCacheType;

struct Case {
  ops::AttentionShape shape;
  int64_t n_tokens, prefill, window;
};

// Rows of `width` floats as the cache of `type` stores them, decoded.
std::vector<float> as_stored(const GguflowKernels& k, KvCacheType type, const std::vector<float>& rows, int64_t width) {
  const uint32_t ggml = ops::kv_cache_ggml_type(type);
  std::vector<float> out(rows.size());
  std::vector<std::byte> row(ops::kv_cache_row_bytes(type, width));
  for (size_t r = 0; r < rows.size() / width; ++r) {
    k.kv_store_row(ggml, rows.data() + r * width, row.data(), width);
    float* dst = out.data() + r * width;
    switch (type) {
      case KvCacheType::kF32: std::memcpy(dst, row.data(), sizeof(float) * width); break;
      case KvCacheType::kF16: quant::dequantize_row_f16(reinterpret_cast<const gguflow_fp16_t*>(row.data()), dst, width); break;
      case KvCacheType::kQ8_0: quant::dequantize_row_q8_0(reinterpret_cast<const block_q8_0*>(row.data()), dst, width); break;
      case KvCacheType::kQ4_0: quant::dequantize_row_q4_0(reinterpret_cast<const block_q4_0*>(row.data()), dst, width); break;
    }
  }
  return out;
}

// Causal grouped-query attention in double over keys kk and values v (token t at position t),
// keys j with t - j < window when window > 0.
std::vector<double> reference(const ops::AttentionShape& s, const std::vector<float>& q, const std::vector<float>& kk,
                              const std::vector<float>& v, int64_t n_tokens, int64_t window) {
  const int64_t hd = s.head_dim, group = s.n_head / s.n_kv_head;
  const double scale = 1 / std::sqrt(static_cast<double>(hd));
  std::vector<double> out(static_cast<size_t>(n_tokens * s.q_row()));
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t h = 0; h < s.n_head; ++h) {
      const int64_t kvh = h / group, first = window > 0 ? std::max<int64_t>(0, t - window + 1) : 0;
      std::vector<double> w;
      double mx = -1e300, sum = 0;
      for (int64_t j = first; j <= t; ++j) {
        double d = 0;
        for (int64_t i = 0; i < hd; ++i) d += double(q[t * s.q_row() + h * hd + i]) * kk[j * s.kv_row() + kvh * hd + i];
        w.push_back(d * scale);
        mx = std::max(mx, w.back());
      }
      for (double& x : w) sum += (x = std::exp(x - mx));
      for (int64_t i = 0; i < hd; ++i) {
        double o = 0;
        for (int64_t j = first; j <= t; ++j) o += w[j - first] / sum * v[j * s.kv_row() + kvh * hd + i];
        out[t * s.q_row() + h * hd + i] = o;
      }
    }
  return out;
}

// The prompt as one batch, then one token per step, each step's heads in two ranges (two
// threads); a window uses a ring of window + prefill - 1 rows.
std::vector<float> run(const GguflowKernels& k, const Case& c, KvCacheType kt, KvCacheType vt,
                       const std::vector<float>& q, const std::vector<float>& kk, const std::vector<float>& v) {
  const ops::AttentionShape& s = c.shape;
  const int64_t rows = c.window > 0 ? c.window + c.prefill - 1 : c.n_tokens;
  ops::KvCacheView cache;
  cache.rows = rows;
  cache.k_type = kt;
  cache.v_type = vt;
  cache.k_row_bytes = ops::kv_cache_row_bytes(kt, s.kv_row());
  cache.v_row_bytes = ops::kv_cache_row_bytes(vt, s.kv_row());
  std::vector<std::byte> kc(cache.k_row_bytes * rows, std::byte{0x7f}), vc(cache.v_row_bytes * rows, std::byte{0x7f});
  cache.k = kc.data();
  cache.v = vc.data();
  ops::AttentionScoring scoring;
  scoring.window = c.window;
  std::vector<int32_t> pos(static_cast<size_t>(c.n_tokens));
  for (int64_t t = 0; t < c.n_tokens; ++t) pos[t] = static_cast<int32_t>(t);
  std::vector<float> out(static_cast<size_t>(c.n_tokens * s.q_row())), scores(static_cast<size_t>(rows));
  ops::kv_cache_store(k, s, kk.data(), v.data(), pos.data(), c.prefill, cache);
  ops::attention_heads(k, s, scoring, q.data(), pos.data(), c.prefill, cache, 0, c.prefill * s.n_head,
                       scores.data(), out.data());
  for (int64_t t = c.prefill; t < c.n_tokens; ++t) {
    ops::kv_cache_store(k, s, kk.data() + t * s.kv_row(), v.data() + t * s.kv_row(), &pos[t], 1, cache);
    const float* qt = q.data() + t * s.q_row();
    float* ot = out.data() + t * s.q_row();
    ops::attention_heads(k, s, scoring, qt, &pos[t], t + 1, cache, 0, s.n_head / 2, scores.data(), ot);
    ops::attention_heads(k, s, scoring, qt, &pos[t], t + 1, cache, s.n_head / 2, s.n_head, scores.data(), ot);
  }
  return out;
}

std::vector<float> randn(size_t n, std::mt19937& rng, float sigma) {
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> x(n);
  for (float& e : x) e = d(rng);
  return x;
}

class AttentionCacheTypes : public ::testing::TestWithParam<std::string> {};

TEST_P(AttentionCacheTypes, MatchDoubleReferences) {
  const GguflowKernels& k = plugin_table(GetParam());
  const Case cases[] = {
      {{4, 4, 8}, 20, 12, 0},    // stories260K's heads: a 32-element block holds 4 heads
      {{4, 2, 64}, 20, 12, 0},   // Qwen2.5-0.5B's heads
      {{4, 2, 64}, 20, 6, 5},    // a sliding window: the ring of 10 rows wraps twice
      {{6, 2, 32}, 9, 1, 0},     // decode only
  };
  const KvCacheType types[] = {KvCacheType::kF32, KvCacheType::kF16, KvCacheType::kQ8_0, KvCacheType::kQ4_0};
  std::mt19937 rng(7);
  for (const Case& c : cases) {
    const ops::AttentionShape& s = c.shape;
    const auto q = randn(c.n_tokens * s.q_row(), rng, 1.0f);
    const auto kk = randn(c.n_tokens * s.kv_row(), rng, 1.0f);
    const auto v = randn(c.n_tokens * s.kv_row(), rng, 1.0f);
    double v_max = 0;
    for (float x : v) v_max = std::max(v_max, static_cast<double>(std::fabs(x)));
    const std::vector<double> exact = reference(s, q, kk, v, c.n_tokens, c.window);
    for (KvCacheType kt : types)
      for (KvCacheType vt : types) {
        const std::string where = "K " + std::string(ops::kv_cache_type_name(kt)) + ", V " +
                                  ops::kv_cache_type_name(vt) + ", head_dim " + std::to_string(s.head_dim) +
                                  (c.window ? ", window " + std::to_string(c.window) : "");
        const auto ks = as_stored(k, kt, kk, s.kv_row()), vs = as_stored(k, vt, v, s.kv_row());
        const std::vector<float> got = run(k, c, kt, vt, q, kk, v);
        const std::vector<double> stored = reference(s, q, ks, vs, c.n_tokens, c.window);
        // The stored error's bound (see the top of the file).
        double ds = 0, dv = 0;
        const int64_t hd = s.head_dim, group = s.n_head / s.n_kv_head;
        for (int64_t t = 0; t < c.n_tokens; ++t)
          for (int64_t h = 0; h < s.n_head; ++h)
            for (int64_t j = 0; j <= t; ++j) {
              double d = 0;
              for (int64_t i = 0; i < hd; ++i) {
                const int64_t e = j * s.kv_row() + (h / group) * hd + i;
                d += double(q[t * s.q_row() + h * hd + i]) * (double(ks[e]) - kk[e]);
              }
              ds = std::max(ds, std::fabs(d) / std::sqrt(static_cast<double>(hd)));
            }
        for (size_t e = 0; e < v.size(); ++e) dv = std::max(dv, std::fabs(double(vs[e]) - v[e]));
        const double bound = (std::exp(2 * ds) - 1) * v_max + dv + 1e-5 * v_max;
        double worst_stored = 0, worst_exact = 0;
        for (size_t i = 0; i < got.size(); ++i) {
          worst_stored = std::max(worst_stored, std::fabs(got[i] - stored[i]));
          worst_exact = std::max(worst_exact, std::fabs(got[i] - exact[i]));
        }
        EXPECT_LE(worst_stored, 1e-5 * v_max) << where;
        EXPECT_LE(worst_exact, bound) << where << " (ds " << ds << ", dv " << dv << ")";
        if (kt == KvCacheType::kF32 && vt == KvCacheType::kF32) EXPECT_EQ(ds + dv, 0.0) << where;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Plugins, AttentionCacheTypes, ::testing::ValuesIn(supported_plugin_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace gguflow::test
