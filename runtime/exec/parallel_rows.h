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

// The split of a matmul's output rows: body(r0, r1) over row ranges covering [0, n_rows), cut
// at multiples of `unit` (a packed weight's group, which divides n_rows, or 1), a few ranges per
// thread and none under 16 rows. kernels_bench splits its products the same way.
template <typename Body>
void parallel_row_units(int64_t n_rows, int64_t unit, const Body& body) {
  const int64_t n_units = (n_rows + unit - 1) / unit;
  parallel_rows(n_units, grain_for(n_units, (16 + unit - 1) / unit), [&](int64_t u0, int64_t u1) {
    body(u0 * unit, std::min(n_rows, u1 * unit));
  });
}

}  // namespace gguflow::exec
