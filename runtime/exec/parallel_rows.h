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

// Calls body(begin, end) over disjoint sub-ranges covering [0, n), each of at least `min_chunk`
// items: TBB halves a range only while it is longer than its grain, so a grain of
// 2 * min_chunk - 1 never leaves a piece under min_chunk (the partitioner may stop splitting
// earlier, leaving larger pieces). Runs inline when n is under two chunks or the arena has one
// thread. `isolate` keeps a thread waiting here from picking up
// an unrelated flow-graph node, which would stall this op behind it.
template <typename Body>
void parallel_rows(int64_t n, int64_t min_chunk, const Body& body) {
  min_chunk = std::max<int64_t>(min_chunk, 1);
  if (n < 2 * min_chunk || tbb::this_task_arena::max_concurrency() == 1) {
    if (n > 0) body(int64_t{0}, n);
    return;
  }
  tbb::this_task_arena::isolate([&] {
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, n, 2 * min_chunk - 1),
                      [&](const tbb::blocked_range<int64_t>& r) { body(r.begin(), r.end()); });
  });
}

// A chunk size that leaves 4-8 chunks of `n` items per thread of the arena (load balance when
// one thread is slowed: a preempted vCPU's chunks are taken by the other) but none under
// `min_chunk`.
inline int64_t grain_for(int64_t n, int64_t min_chunk) {
  const int64_t threads = tbb::this_task_arena::max_concurrency();
  return std::max<int64_t>(min_chunk, n / (8 * threads) + 1);
}

// Least work a thread's share of a matmul gets, in weight bytes times activation rows: below
// it a split costs more than it saves. Measured with kernels_bench on the 2-vCPU EPYC VM: a
// 128 x 896 Q8_0 attn_v (119 KiB) takes ~4.5 us on one thread and 5-9 us split in two, since
// each share is a new stream from DRAM whose first lines arrive at full latency and the
// fork/join costs ~1 us on top.
constexpr int64_t kMinShareWork = int64_t{128} << 10;

// The split of a matmul's output rows: body(r0, r1) over row ranges covering [0, n_rows), cut
// at multiples of `unit` (a packed weight's group, which divides n_rows, or 1), a few ranges per
// thread, none under 16 rows or under kMinShareWork of work (row_bytes x n_act per row).
// kernels_bench splits its products the same way.
template <typename Body>
void parallel_row_units(int64_t n_rows, int64_t unit, size_t row_bytes, int64_t n_act, const Body& body) {
  const int64_t n_units = (n_rows + unit - 1) / unit;
  const int64_t unit_work = std::max<int64_t>(1, unit * static_cast<int64_t>(row_bytes) * std::max<int64_t>(1, n_act));
  const int64_t min_units = std::max((16 + unit - 1) / unit, (kMinShareWork + unit_work - 1) / unit_work);
  parallel_rows(n_units, grain_for(n_units, min_units), [&](int64_t u0, int64_t u1) {
    body(u0 * unit, std::min(n_rows, u1 * unit));
  });
}

}  // namespace gguflow::exec
