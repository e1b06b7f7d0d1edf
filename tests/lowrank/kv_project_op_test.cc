// The kv_project op against a double-precision reference: attention over the keys and values
// the projection reconstructs (K~ = P c + mu), i.e. exactly what the reduced-space formulas
// claim to compute; and, with a full orthonormal basis, against plain attention on the
// original cache.
#include "ops/kv_project.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tests/lowrank/low_rank_reference.h"
#include "tests/lowrank/random_orthonormal.h"
#include "tests/ops/test_kernels.h"

namespace gguflow {
namespace {

struct Case {
  ops::AttentionShape s{8, 4, 8};
  int64_t T = 12;
  std::vector<float> q, k, v;
};

Case make_case(std::mt19937_64& rng) {
  Case c;
  test::random_qkv(c.s, c.T, rng, &c.q, &c.k, &c.v);
  return c;
}

// Runs the op over all tokens of `c` (store, then every head) with bases of the given ranks.
std::vector<float> run_op(const Case& c, const std::vector<float>& kb, const std::vector<float>& km, int64_t kr,
                          const std::vector<float>& vb, const std::vector<float>& vm, int64_t vr) {
  const auto& kern = test::scalar_f32_test_kernels();
  const ops::LowRankBasis K = ops::make_low_rank_basis(kb.data(), km.data(), kr, c.s);
  const ops::LowRankBasis V = ops::make_low_rank_basis(vb.data(), vm.data(), vr, c.s);
  std::vector<float> ck(c.T * kr), cv(c.T * vr), centred(c.s.kv_row());
  const ops::KvCacheView cache = ops::KvCacheView::f32(ck.data(), cv.data(), c.T, kr, vr);
  std::vector<int32_t> pos(c.T);
  for (int64_t t = 0; t < c.T; ++t) pos[t] = static_cast<int32_t>(t);
  ops::kv_project_store(c.s, K, V, c.k.data(), c.v.data(), pos.data(), c.T, cache, centred.data());
  std::vector<float> scratch(ops::kv_project_scratch_floats(K, V, c.T)), out(c.T * c.s.q_row());
  ops::kv_project_heads(kern, c.s, K, V, c.q.data(), pos.data(), cache, 0, c.T * c.s.n_head, scratch.data(),
                        out.data());
  return out;
}

TEST(KvProjectOp, FullOrthonormalBasisEqualsPlainAttention) {
  std::mt19937_64 rng(5);
  const Case c = make_case(rng);
  const int64_t d = c.s.kv_row();
  const auto P = test::random_orthonormal(d, rng);
  std::vector<float> basis(P.begin(), P.end()), mean(d);
  for (int64_t i = 0; i < d; ++i) mean[i] = 0.3f * static_cast<float>(i % 5);
  const auto out = run_op(c, basis, mean, d, basis, mean, d);
  const auto ref = test::attention_reference(c.s, c.q, std::vector<double>(c.k.begin(), c.k.end()),
                                       std::vector<double>(c.v.begin(), c.v.end()), c.T);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], ref[i], 2e-5) << i;
}

// Rank 5 of 32 for K, 3 for V: the op equals attention over the reconstructions P Pᵀ(x - mu) + mu.
TEST(KvProjectOp, LowRankEqualsAttentionOverReconstructedCache) {
  std::mt19937_64 rng(9);
  const Case c = make_case(rng);
  const int64_t d = c.s.kv_row();
  const auto P = test::random_orthonormal(d, rng);
  const int64_t kr = 5, vr = 3;
  std::vector<float> kb(P.begin(), P.begin() + kr * d), vb(P.begin() + 7 * d, P.begin() + (7 + vr) * d);
  std::vector<float> km(d), vm(d);
  for (int64_t i = 0; i < d; ++i) km[i] = 0.5f, vm[i] = -0.25f + 0.01f * static_cast<float>(i);
  const auto out = run_op(c, kb, km, kr, vb, vm, vr);
  const auto ref = test::attention_reference(c.s, c.q, test::reconstruct(c.k, kb, km, kr, d),
                                             test::reconstruct(c.v, vb, vm, vr, d), c.T);
  double worst = 0;
  for (size_t i = 0; i < out.size(); ++i) worst = std::max(worst, std::fabs(out[i] - ref[i]));
  EXPECT_LT(worst, 2e-5);
  // And it is not plain attention: a rank-5 key cache changes the result.
  const auto full = test::attention_reference(c.s, c.q, std::vector<double>(c.k.begin(), c.k.end()),
                                        std::vector<double>(c.v.begin(), c.v.end()), c.T);
  double moved = 0;
  for (size_t i = 0; i < out.size(); ++i) moved = std::max(moved, std::fabs(out[i] - full[i]));
  EXPECT_GT(moved, 1e-2);
}

// Per-head bases stacked block-diagonally: each head only uses its own rows.
TEST(KvProjectOp, BlockDiagonalHeadsFindTheirRows) {
  const ops::AttentionShape s{8, 4, 8};
  const int64_t d = s.kv_row();
  const int64_t ranks[4] = {2, 1, 3, 2};
  std::vector<float> basis, mean(d, 0.0f);
  for (int64_t g = 0; g < 4; ++g)
    for (int64_t j = 0; j < ranks[g]; ++j) {
      std::vector<float> row(d, 0.0f);
      row[g * 8 + j] = 1.0f;
      basis.insert(basis.end(), row.begin(), row.end());
    }
  const auto b = ops::make_low_rank_basis(basis.data(), mean.data(), 8, s);
  EXPECT_EQ(b.first, (std::vector<int64_t>{0, 2, 3, 6}));
  EXPECT_EQ(b.last, (std::vector<int64_t>{2, 3, 6, 8}));
}

}  // namespace
}  // namespace gguflow
