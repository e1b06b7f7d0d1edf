#include "runtime/exec/tbb_parallel.h"

#include <algorithm>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

namespace gguflow::exec {

int TbbParallel::concurrency() const { return tbb::this_task_arena::max_concurrency(); }

int TbbParallel::thread_index() const {
  return std::max(0, tbb::this_task_arena::current_thread_index());
}

void TbbParallel::split(int64_t n, int64_t min_piece, ops::RangeBody body) const {
  tbb::this_task_arena::isolate([&] {
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, n, 2 * min_piece - 1),
                      [&](const tbb::blocked_range<int64_t>& r) { body(r.begin(), r.end()); });
  });
}

const TbbParallel& tbb_parallel() {
  static const TbbParallel instance;
  return instance;
}

}  // namespace gguflow::exec
