// ops::Parallel on oneTBB: pieces run as a parallel_for inside the calling task arena.
#pragma once

#include "ops/parallel.h"

namespace gguflow::exec {

// Stateless: every call works in the task arena of the calling thread (a session's arena
// bounds the threads). One instance serves any number of sessions.
class TbbParallel final : public ops::Parallel {
 public:
  int concurrency() const override;
  int thread_index() const override;
  // TBB halves a range only while it is longer than its grain, so a grain of
  // 2 * min_piece - 1 never leaves a piece under min_piece (the partitioner may stop splitting
  // earlier, leaving larger pieces). `isolate` keeps a thread waiting here from picking up an
  // unrelated flow-graph node, which would stall this op behind it.
  void split(int64_t n, int64_t min_piece, ops::RangeBody body) const override;
};

// The process-wide instance.
const TbbParallel& tbb_parallel();

}  // namespace gguflow::exec
