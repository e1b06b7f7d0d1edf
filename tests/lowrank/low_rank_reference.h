// Double-precision references for the low-rank attention ops' tests: causal grouped-query
// attention over given keys and values, and the reconstruction P Pᵀ(x − μ) + μ a low-rank cache
// stands for.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "ops/attention.h"

namespace gguflow::test {

// q [T][q_row], k, v [T][kv_row] of T tokens: Gaussian values around 0.5 (a nonzero mean, so
// the ops' mean terms matter).
inline void random_qkv(const ops::AttentionShape& s, int64_t T, std::mt19937_64& rng, std::vector<float>* q,
                       std::vector<float>* k, std::vector<float>* v) {
  std::normal_distribution<float> g;
  q->resize(T * s.q_row());
  k->resize(T * s.kv_row());
  v->resize(T * s.kv_row());
  for (auto* x : {q, k, v})
    for (auto& e : *x) e = g(rng) + 0.5f;
}

// Causal GQA in double; q [T][q_row], k, v [T][kv_row] -> [T][q_row]. Scale 1/sqrt(head_dim).
inline std::vector<double> attention_reference(const ops::AttentionShape& s, const std::vector<float>& q,
                                               const std::vector<double>& k, const std::vector<double>& v,
                                               int64_t T) {
  const int64_t hd = s.head_dim, group = s.n_head / s.n_kv_head;
  std::vector<double> out(T * s.q_row(), 0.0);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < s.n_head; ++h) {
      const int64_t g = h / group;
      std::vector<double> w(t + 1);
      double mx = -1e300, sum = 0;
      for (int64_t j = 0; j <= t; ++j) {
        double d = 0;
        for (int64_t i = 0; i < hd; ++i) d += double(q[t * s.q_row() + h * hd + i]) * k[j * s.kv_row() + g * hd + i];
        mx = std::max(mx, w[j] = d / std::sqrt(double(hd)));
      }
      for (auto& x : w) sum += (x = std::exp(x - mx));
      for (int64_t j = 0; j <= t; ++j)
        for (int64_t i = 0; i < hd; ++i) out[t * s.q_row() + h * hd + i] += w[j] / sum * v[j * s.kv_row() + g * hd + i];
    }
  return out;
}

// Rows x [T][d] through a rank-r basis b ([r][d], orthonormal rows) and mean m, in double.
inline std::vector<double> reconstruct(const std::vector<float>& x, const std::vector<float>& b,
                                       const std::vector<float>& m, int64_t r, int64_t d) {
  const int64_t T = static_cast<int64_t>(x.size()) / d;
  std::vector<double> out(x.size());
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < d; ++i) {
      double acc = m[i];
      for (int64_t j = 0; j < r; ++j) {
        double coord = 0;
        for (int64_t e = 0; e < d; ++e) coord += double(b[j * d + e]) * (x[t * d + e] - m[e]);
        acc += coord * b[j * d + i];
      }
      out[t * d + i] = acc;
    }
  return out;
}

}  // namespace gguflow::test
