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
  std::vector<float> out(static_cast<size_t>(c.n_tokens * s.q_row())), scores(static_cast<size_t>(ops::attention_scratch_floats(s, rows, cache)));
  ops::kv_cache_store(k, s, kk.data(), v.data(), pos.data(), c.prefill, cache);
  ops::attention_heads(k, s, scoring, q.data(), pos.data(), c.prefill, cache, 0, c.prefill * s.n_head,
                       rows, scores.data(), out.data());
  for (int64_t t = c.prefill; t < c.n_tokens; ++t) {
    ops::kv_cache_store(k, s, kk.data() + t * s.kv_row(), v.data() + t * s.kv_row(), &pos[t], 1, cache);
    const float* qt = q.data() + t * s.q_row();
    float* ot = out.data() + t * s.q_row();
    ops::attention_heads(k, s, scoring, qt, &pos[t], t + 1, cache, 0, s.n_head / 2, rows, scores.data(), ot);
    ops::attention_heads(k, s, scoring, qt, &pos[t], t + 1, cache, s.n_head / 2, s.n_head, rows, scores.data(), ot);
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
      {{6, 2, 32}, 45, 37, 0},   // a prompt of several blocks of queries (10 tokens x 3 heads)
      {{4, 2, 64}, 40, 33, 7},   // blocks of 16 tokens wider than the window: rows see few common keys
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
        if (kt == KvCacheType::kF32 && vt == KvCacheType::kF32) {
          EXPECT_EQ(ds + dv, 0.0) << where;
        }
      }
  }
}

// Attention one query at a time, as ops/attention.cc computed it before blocks of queries:
// kv_dot per key, scale, cap, softmax, kv_axpy per key in order (f32: dot_f32, axpy_f32).
void row_at_a_time(const GguflowKernels& k, const ops::AttentionShape& s, const ops::AttentionScoring& sc,
                   const float* q, const int32_t* pos, int64_t n_tokens, int64_t seq_len,
                   const ops::KvCacheView& cache, float* out) {
  const int64_t hd = s.head_dim, group = s.n_head / s.n_kv_head;
  const float scale = sc.scale != 0 ? sc.scale : 1.0f / std::sqrt(static_cast<float>(hd));
  std::vector<float> w(static_cast<size_t>(cache.rows));
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t h = 0; h < s.n_head; ++h) {
      const int64_t p = pos[t], last = sc.causal ? p : seq_len - 1;
      const int64_t first = sc.window > 0 ? std::max<int64_t>(0, p - sc.window + 1) : 0;
      const int64_t n = last + 1 - first, offset = (h / group) * hd;
      const float* qh = q + t * s.q_row() + h * hd;
      const uint32_t kt = ops::kv_cache_ggml_type(cache.k_type), vt = ops::kv_cache_ggml_type(cache.v_type);
      for (int64_t j = 0; j < n; ++j) {
        const std::byte* row = cache.k_row((first + j) % cache.rows);
        w[j] = kt == GGML_TYPE_F32 ? k.dot_f32(qh, reinterpret_cast<const float*>(row) + offset, hd)
                                   : k.kv_dot(kt, qh, row, offset, hd);
      }
      k.scale_f32(scale, w.data(), n);
      if (sc.softcap > 0)
        for (int64_t j = 0; j < n; ++j) w[j] = sc.softcap * std::tanh(w[j] / sc.softcap);
      k.softmax_f32(w.data(), n);
      float* oh = out + t * s.q_row() + h * hd;
      std::memset(oh, 0, sizeof(float) * hd);
      for (int64_t j = 0; j < n; ++j) {
        const std::byte* row = cache.v_row((first + j) % cache.rows);
        if (vt == GGML_TYPE_F32) k.axpy_f32(w[j], reinterpret_cast<const float*>(row) + offset, oh, hd);
        else k.kv_axpy(vt, w[j], row, offset, oh, hd);
      }
    }
}

// Blocks of queries give every row the bits of the row computed alone, whatever the blocks:
// the prompt in one step (split in two odd task ranges, as two threads), in steps of 7 tokens,
// and decoded a token at a time, all equal the one-query-at-a-time computation bit for bit; for
// every cache type, GQA groups of 1, 3 and 7, head widths with a vector tail (f32/f16: 20),
// sliding windows over a ring, soft-capping with an explicit scale, and bidirectional attention;
// with every KV head in one row and with a block per KV head (head-major, a session's layout).
TEST_P(AttentionCacheTypes, BlocksGiveTheBitsOfOneQueryAtATime) {
  const GguflowKernels& k = plugin_table(GetParam());
  struct Blocked {
    ops::AttentionShape shape;
    ops::AttentionScoring scoring;
    int64_t n_tokens;
  };
  ops::AttentionScoring window, softcap, bidirectional;
  window.window = 9;
  softcap.softcap = 5.0f;
  softcap.scale = 0.3f;
  bidirectional.causal = false;
  const Blocked cases[] = {
      {{14, 2, 64}, {}, 70},        // Qwen2.5-0.5B's heads: blocks of 4 tokens x 7 heads
      {{6, 2, 32}, window, 53},     // window 9: the ring has 9 + 53 - 1 rows
      {{4, 4, 32}, softcap, 41},    // one head per KV head: blocks of 32 tokens
      {{6, 2, 32}, bidirectional, 29},
      {{6, 2, 20}, window, 33},     // f32 / f16 only (20 is not whole q8_0 / q4_0 blocks)
  };
  const KvCacheType types[] = {KvCacheType::kF32, KvCacheType::kF16, KvCacheType::kQ8_0, KvCacheType::kQ4_0};
  std::mt19937 rng(11);
  for (const Blocked& c : cases) {
    const ops::AttentionShape& s = c.shape;
    const int64_t n = c.n_tokens;
    const auto q = randn(n * s.q_row(), rng, 1.0f), kk = randn(n * s.kv_row(), rng, 1.0f);
    const auto v = randn(n * s.kv_row(), rng, 1.0f);
    std::vector<int32_t> pos(static_cast<size_t>(n));
    for (int64_t t = 0; t < n; ++t) pos[t] = static_cast<int32_t>(t);
    for (KvCacheType type : types) {
      if (s.kv_row() % 32 != 0 && (type == KvCacheType::kQ8_0 || type == KvCacheType::kQ4_0)) continue;
      const std::string where = std::string(ops::kv_cache_type_name(type)) + ", " + std::to_string(s.n_head) + "/" +
                                std::to_string(s.n_kv_head) + " heads of " + std::to_string(s.head_dim) +
                                ", window " + std::to_string(c.scoring.window) + ", softcap " +
                                std::to_string(c.scoring.softcap) + (c.scoring.causal ? "" : ", bidirectional");
      const int64_t rows = c.scoring.window > 0 ? c.scoring.window + n - 1 : n;
      std::vector<float> want(q.size()), got(q.size());
      // Every KV head in one row (heads = 1), then a block per KV head (a session's layout, where
      // a head is whole blocks of the type): the same bits.
      std::vector<int64_t> layouts{1};
      if (s.n_kv_head > 1 && ops::kv_cache_row_error(type, s.head_dim).empty()) layouts.push_back(s.n_kv_head);
      for (const int64_t heads : layouts) {
        const std::string layout = where + (heads > 1 ? ", head-major" : ", rows");
        ops::KvCacheView cache;
        cache.rows = rows;
        cache.heads = heads;
        cache.k_type = cache.v_type = type;
        cache.k_row_bytes = cache.v_row_bytes = ops::kv_cache_row_bytes(type, s.kv_row() / heads);
        if (heads > 1) cache.k_head_stride = cache.v_head_stride = cache.k_row_bytes * rows;
        std::vector<std::byte> kc(cache.k_bytes(), std::byte{0x7f}), vc(cache.v_bytes(), std::byte{0x7f});
        cache.k = kc.data();
        cache.v = vc.data();
        std::vector<float> scratch(static_cast<size_t>(ops::attention_scratch_floats(s, rows, cache)));
        // The prompt in one step: the reference (whole rows), then blocks over two odd task ranges.
        ops::kv_cache_store(k, s, kk.data(), v.data(), pos.data(), n, cache);
        if (heads == 1) row_at_a_time(k, s, c.scoring, q.data(), pos.data(), n, n, cache, want.data());
        std::fill(got.begin(), got.end(), 0.0f);
        const int64_t cut = n * s.n_head / 3 + 1;
        ops::attention_heads(k, s, c.scoring, q.data(), pos.data(), n, cache, 0, cut, rows, scratch.data(), got.data());
        ops::attention_heads(k, s, c.scoring, q.data(), pos.data(), n, cache, cut, n * s.n_head, rows, scratch.data(),
                             got.data());
        EXPECT_EQ(got, want) << layout << ": one step";
        if (!c.scoring.causal) continue;  // a bidirectional query's keys depend on its step
        // Steps of 7 tokens, then one token per step; a window's ring is then as small as a
        // session makes it (window + step - 1 rows) and wraps.
        for (int64_t step : {int64_t{7}, int64_t{1}}) {
          std::fill(kc.begin(), kc.end(), std::byte{0x7f});
          std::fill(vc.begin(), vc.end(), std::byte{0x7f});
          std::fill(got.begin(), got.end(), 0.0f);
          ops::KvCacheView ring = cache;
          ring.rows = c.scoring.window > 0 ? c.scoring.window + step - 1 : n;
          for (int64_t t = 0; t < n; t += step) {
            const int64_t m = std::min(step, n - t);
            ops::kv_cache_store(k, s, kk.data() + t * s.kv_row(), v.data() + t * s.kv_row(), &pos[t], m, ring);
            ops::attention_heads(k, s, c.scoring, q.data() + t * s.q_row(), &pos[t], t + m, ring, 0, m * s.n_head,
                                 ring.rows, scratch.data(), got.data() + t * s.q_row());
          }
          EXPECT_EQ(got, want) << layout << ": steps of " << step;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Plugins, AttentionCacheTypes, ::testing::ValuesIn(supported_plugin_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace gguflow::test
