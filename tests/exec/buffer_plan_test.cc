#include "runtime/exec/buffer_plan.h"

#include <random>

#include <gtest/gtest.h>

namespace gguflow::exec {
namespace {

// m is an ancestor of n (must finish before n starts), by depth-first search.
bool reaches(const std::vector<std::vector<int>>& preds, int m, int n) {
  for (int p : preds[n])
    if (p == m || reaches(preds, m, p)) return true;
  return false;
}

// Two buffers may share bytes only if one's producer and users all finish before the other's
// producer starts, whatever order a concurrent scheduler picks.
bool ordered(const std::vector<std::vector<int>>& preds, const BufferRequest& a,
             const BufferRequest& b) {
  if (a.pinned || !reaches(preds, a.producer, b.producer)) return false;
  for (int u : a.users)
    if (!reaches(preds, u, b.producer)) return false;
  return true;
}

TEST(BufferPlan, OverlappingBuffersNeverLiveAtTheSameTime) {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 30; ++trial) {
    const int n_nodes = 25;
    std::vector<std::vector<int>> preds(n_nodes);
    std::vector<BufferRequest> reqs;
    for (int n = 0; n < n_nodes; ++n) {
      // One output per node, read by 1-3 later nodes; some scratch.
      for (int p = 0; p < n; ++p)
        if (rng() % 5 == 0) preds[n].push_back(p);
    }
    for (int n = 0; n < n_nodes; ++n) {
      BufferRequest out{n, {}, 64 + rng() % 4096, rng() % 10 == 0};
      for (int c = n + 1; c < n_nodes; ++c)
        if (std::find(preds[c].begin(), preds[c].end(), n) != preds[c].end()) out.users.push_back(c);
      reqs.push_back(out);
      if (rng() % 2) reqs.push_back({n, {n}, 64 + rng() % 1024, false});
    }
    const BufferPlan plan = plan_buffers(preds, reqs);
    for (size_t i = 0; i < reqs.size(); ++i) {
      EXPECT_EQ(plan.offsets[i] % 64, 0u);
      EXPECT_LE(plan.offsets[i] + reqs[i].bytes, plan.arena_bytes);
      for (size_t j = 0; j < i; ++j) {
        const bool overlap = plan.offsets[i] < plan.offsets[j] + reqs[j].bytes &&
                             plan.offsets[j] < plan.offsets[i] + reqs[i].bytes;
        if (overlap) {
          EXPECT_TRUE(ordered(preds, reqs[i], reqs[j]) || ordered(preds, reqs[j], reqs[i]))
              << "trial " << trial << ": requests " << i << " and " << j << " share memory";
        }
      }
    }
    EXPECT_GT(plan.arena_bytes, 0u);
  }
}

TEST(BufferPlan, AChainReusesMemory) {
  // 0 -> 1 -> 2 -> 3 -> 4, each output read only by the next node: two slots suffice.
  std::vector<std::vector<int>> preds = {{}, {0}, {1}, {2}, {3}};
  std::vector<BufferRequest> reqs;
  for (int n = 0; n < 5; ++n) reqs.push_back({n, n < 4 ? std::vector<int>{n + 1} : std::vector<int>{}, 1024, false});
  const BufferPlan plan = plan_buffers(preds, reqs);
  EXPECT_EQ(plan.arena_bytes, 2u * 1024u);
}

}  // namespace
}  // namespace gguflow::exec
