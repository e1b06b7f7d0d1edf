// The kv_project_rope op's numerics against a double-precision reference: attention whose keys
// are the low-rank reconstructions P Pᵀ(k − μ) + μ of the un-rotated keys, each rotated in
// double at its own position (normal and neox pairing, full and partial rotation, frequency
// factors), with values reconstructed as kv_project's.
#include "ops/kv_project_rope.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

#include "tests/lowrank/low_rank_reference.h"
#include "tests/lowrank/random_orthonormal.h"
#include "tests/ops/test_kernels.h"

namespace gguflow {
namespace {

struct Rotation {
  int64_t n_rot;
  ops::RopePairing pairing;
  float base;
  std::vector<float> factors;  // [n_rot/2] or empty
};

// RoPE in double of every head of rows x [T][kv_row], row t at position t.
void rotate_reference(std::vector<double>& x, const ops::AttentionShape& s, const Rotation& r) {
  const int64_t hd = s.head_dim, T = static_cast<int64_t>(x.size()) / s.kv_row();
  for (int64_t t = 0; t < T; ++t)
    for (int64_t g = 0; g < s.n_kv_head; ++g) {
      double* h = x.data() + t * s.kv_row() + g * hd;
      for (int64_t i = 0; i < r.n_rot / 2; ++i) {
        double theta = double(t) * std::pow(double(r.base), -2.0 * double(i) / double(r.n_rot));
        if (!r.factors.empty()) theta /= r.factors[i];
        const int64_t a = r.pairing == ops::RopePairing::kNeox ? i : 2 * i;
        const int64_t b = r.pairing == ops::RopePairing::kNeox ? i + r.n_rot / 2 : 2 * i + 1;
        const double x0 = h[a], x1 = h[b];
        h[a] = x0 * std::cos(theta) - x1 * std::sin(theta);
        h[b] = x0 * std::sin(theta) + x1 * std::cos(theta);
      }
    }
}

struct Case {
  ops::AttentionShape s{4, 2, 8};  // 4 query heads over 2 KV heads of 8 values
  int64_t T = 12;
  std::vector<float> q, k, v;
  std::vector<float> kb, km, vb, vm;  // bases [r][kv_row] and means [kv_row]
  int64_t kr = 0, vr = 0;
};

Case make_case(uint64_t seed, int64_t kr, int64_t vr) {
  std::mt19937_64 rng(seed);
  Case c;
  test::random_qkv(c.s, c.T, rng, &c.q, &c.k, &c.v);
  const int64_t d = c.s.kv_row();
  const auto P = test::random_orthonormal(d, rng);
  c.kr = kr;
  c.vr = vr;
  c.kb.assign(P.begin(), P.begin() + kr * d);
  c.vb.assign(P.end() - vr * d, P.end());
  c.km.resize(d);
  c.vm.resize(d);
  for (int64_t i = 0; i < d; ++i) c.km[i] = 0.4f - 0.05f * float(i % 7), c.vm[i] = -0.25f + 0.01f * float(i);
  return c;
}

// Stores every token, rebuilds keys rows [0, T) in two pieces (as two threads would), attends.
std::vector<float> run_op(const Case& c, const Rotation& r) {
  const auto& kern = test::scalar_f32_test_kernels();
  const ops::LowRankBasis K = ops::make_low_rank_basis(c.kb.data(), c.km.data(), c.kr, c.s);
  const ops::LowRankBasis V = ops::make_low_rank_basis(c.vb.data(), c.vm.data(), c.vr, c.s);
  std::vector<float> ck(c.T * c.kr), cv(c.T * c.vr), centred(c.s.kv_row());
  const ops::KvCacheView cache = ops::KvCacheView::f32(ck.data(), cv.data(), c.T, c.kr, c.vr);
  std::vector<int32_t> pos(c.T);
  std::iota(pos.begin(), pos.end(), 0);
  ops::kv_project_store(c.s, K, V, c.k.data(), c.v.data(), pos.data(), c.T, cache, centred.data());
  std::vector<float> cos_sin(c.T * r.n_rot);
  ops::rope_cos_sin(pos.data(), c.T, r.n_rot, r.base, cos_sin.data(), r.factors.empty() ? nullptr : r.factors.data());
  const ops::KeyRotation rot{r.n_rot, r.pairing, cos_sin.data()};
  std::vector<float> keys(c.T * c.s.kv_row());
  ops::kv_project_rope_keys(kern, c.s, K, rot, cache, 0, 5, keys.data());
  ops::kv_project_rope_keys(kern, c.s, K, rot, cache, 5, c.T, keys.data() + 5 * c.s.kv_row());
  std::vector<float> scratch(ops::kv_project_rope_scratch_floats(V, c.T)), out(c.T * c.s.q_row());
  ops::kv_project_rope_heads(kern, c.s, V, keys.data(), c.q.data(), pos.data(), cache, 0, c.T * c.s.n_head,
                             scratch.data(), out.data());
  return out;
}

std::vector<double> reference(const Case& c, const Rotation& r) {
  const int64_t d = c.s.kv_row();
  std::vector<double> keys = test::reconstruct(c.k, c.kb, c.km, c.kr, d);
  rotate_reference(keys, c.s, r);
  return test::attention_reference(c.s, c.q, keys, test::reconstruct(c.v, c.vb, c.vm, c.vr, d), c.T);
}

double max_abs_diff(const std::vector<float>& a, const std::vector<double>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

TEST(KvProjectRopeOp, LowRankEqualsAttentionOverRotatedReconstructions) {
  const Rotation rotations[] = {
      {8, ops::RopePairing::kNormal, 100.0f, {}},
      {4, ops::RopePairing::kNeox, 100.0f, {}},                 // half of each head rotates
      {8, ops::RopePairing::kNormal, 10000.0f, {1.0f, 2.0f, 4.0f, 8.0f}},  // frequency factors
  };
  for (const Rotation& r : rotations) {
    const Case c = make_case(11, 5, 3);
    EXPECT_LT(max_abs_diff(run_op(c, r), reference(c, r)), 2e-5) << "n_rot " << r.n_rot;
  }
}

// The rotation matters: scoring against the same reconstructions un-rotated is far off, so the
// test above would notice keys rotated at the wrong position or not at all.
TEST(KvProjectRopeOp, KeysAreRotatedAtTheirOwnPositions) {
  const Case c = make_case(12, 6, 4);
  const Rotation r{8, ops::RopePairing::kNormal, 100.0f, {}};
  const std::vector<float> out = run_op(c, r);
  const int64_t d = c.s.kv_row();
  const auto unrotated = test::attention_reference(c.s, c.q, test::reconstruct(c.k, c.kb, c.km, c.kr, d),
                                                   test::reconstruct(c.v, c.vb, c.vm, c.vr, d), c.T);
  EXPECT_GT(max_abs_diff(out, unrotated), 1e-2);
}

// With a full orthonormal basis the op is RoPE then plain attention on the original cache.
TEST(KvProjectRopeOp, FullRankEqualsRopeThenAttention) {
  const Case c = make_case(13, 16, 16);
  const Rotation r{8, ops::RopePairing::kNeox, 10000.0f, {}};
  std::vector<double> keys(c.k.begin(), c.k.end());
  rotate_reference(keys, c.s, r);
  const auto ref = test::attention_reference(c.s, c.q, keys, std::vector<double>(c.v.begin(), c.v.end()), c.T);
  EXPECT_LT(max_abs_diff(run_op(c, r), ref), 2e-5);
}

}  // namespace
}  // namespace gguflow
