// Splits a range of independent work items (output rows, attention heads) across the threads of
// the current task arena. Callers guarantee that every item's result is computed by the same
// sequence of operations wherever the split falls, so results do not depend on the thread count.
#pragma once

#include <algorithm>
#include <cstdint>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

namespace gguflow::exec {

// Calls body(begin, end) over disjoint sub-ranges covering [0, n), each at least `grain` items
// (except a shorter last one). Runs inline when one chunk suffices or the arena has one thread.
// `isolate` keeps a thread waiting here from picking up an unrelated flow-graph node, which
// would stall this op behind it.
template <typename Body>
void parallel_rows(int64_t n, int64_t grain, const Body& body) {
  grain = std::max<int64_t>(grain, 1);
  if (n <= grain || tbb::this_task_arena::max_concurrency() == 1) {
    if (n > 0) body(int64_t{0}, n);
    return;
  }
  tbb::this_task_arena::isolate([&] {
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, n, grain),
                      [&](const tbb::blocked_range<int64_t>& r) { body(r.begin(), r.end()); });
  });
}

// A grain that gives each thread a few chunks of `n` items but none smaller than `min_grain`.
inline int64_t grain_for(int64_t n, int64_t min_grain) {
  const int64_t threads = tbb::this_task_arena::max_concurrency();
  return std::max<int64_t>(min_grain, n / (4 * threads) + 1);
}

}  // namespace gguflow::exec
