#include "ops/attention.h"

#include <gtest/gtest.h>

#include "tests/ops/op_test_util.h"
#include "tests/ops/test_kernels.h"

namespace gguflow {
namespace {

// Causal grouped-query attention in double: token t (position p) attends to keys 0..p.
std::vector<double> attention_reference(const ops::AttentionShape& s, const std::vector<float>& q,
                                        const std::vector<float>& kk, const std::vector<float>& v,
                                        int64_t n_tokens) {
  const int64_t hd = s.head_dim, group = s.n_head / s.n_kv_head;
  std::vector<double> out(n_tokens * s.q_row());
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t h = 0; h < s.n_head; ++h) {
      const int64_t kvh = h / group;
      std::vector<double> w(t + 1);
      double mx = -1e300, sum = 0;
      for (int64_t j = 0; j <= t; ++j) {
        double d = 0;
        for (int64_t i = 0; i < hd; ++i)
          d += double(q[t * s.q_row() + h * hd + i]) * kk[j * s.kv_row() + kvh * hd + i];
        w[j] = d / std::sqrt(double(hd));
        mx = std::max(mx, w[j]);
      }
      for (auto& x : w) sum += (x = std::exp(x - mx));
      for (int64_t i = 0; i < hd; ++i) {
        double o = 0;
        for (int64_t j = 0; j <= t; ++j) o += w[j] / sum * v[j * s.kv_row() + kvh * hd + i];
        out[t * s.q_row() + h * hd + i] = o;
      }
    }
  return out;
}

TEST(AttentionOp, GroupedQueryCausalMatchesDoubleReference) {
  const ops::AttentionShape s{/*n_head=*/6, /*n_kv_head=*/2, /*head_dim=*/8};
  const int64_t n_tokens = 5, n_ctx = 16;
  const auto q = test::random_floats(n_tokens * s.q_row(), 8);
  const auto kk = test::random_floats(n_tokens * s.kv_row(), 9);
  const auto v = test::random_floats(n_tokens * s.kv_row(), 10);
  std::vector<float> kc(n_ctx * s.kv_row(), 1e30f), vc(n_ctx * s.kv_row(), 1e30f);
  const ops::KvCacheView cache{kc.data(), vc.data(), n_ctx};
  const std::vector<int32_t> pos = {0, 1, 2, 3, 4};
  const auto& k = test::scalar_f32_test_kernels();

  // Prefill the first 3 tokens as a batch, then the last 2 one at a time (decode).
  ops::kv_cache_store(s, kk.data(), v.data(), pos.data(), 3, cache);
  std::vector<float> out(n_tokens * s.q_row()), scores(n_ctx);
  ops::attention_heads(k, s, q.data(), pos.data(), cache, 0, 3 * s.n_head, scores.data(),
                       out.data());
  for (int64_t t = 3; t < n_tokens; ++t) {
    ops::kv_cache_store(s, kk.data() + t * s.kv_row(), v.data() + t * s.kv_row(), &pos[t], 1,
                        cache);
    // Split the heads of this token into two ranges, as two threads would.
    const float* qt = q.data() + t * s.q_row();
    float* ot = out.data() + t * s.q_row();
    ops::attention_heads(k, s, qt, &pos[t], cache, 0, 4, scores.data(), ot);
    ops::attention_heads(k, s, qt, &pos[t], cache, 4, s.n_head, scores.data(), ot);
  }
  test::expect_close(out, attention_reference(s, q, kk, v, n_tokens), 1e-5, 1e-5);
}

}  // namespace
}  // namespace gguflow
