// Runs the bound nodes of a graph once per step, either as a oneTBB flow graph (one
// continue_node per op, edges from tensor dependencies, one wait_for_all per step) or as a plain
// loop in topological order (the baseline the scheduling overhead is measured against).
#pragma once

#include <memory>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "runtime/exec/node_binding.h"

namespace gguflow::exec {

enum class Scheduler { kFlowGraph, kTopologicalLoop };

class Executor {
 public:
  virtual ~Executor() = default;
  // Runs every node once for `step`, inside the arena; returns when all have finished.
  virtual void run(const StepView& step) = 0;
};

// `predecessors[n]`: nodes n waits for (indices smaller than n). `nodes` and `io` outlive the
// executor; so does `arena`, whose threads run everything.
std::unique_ptr<Executor> make_executor(Scheduler scheduler, tbb::task_arena& arena,
                                        const std::vector<BoundNode>& nodes,
                                        const std::vector<NodeIo>& io,
                                        const std::vector<std::vector<int>>& predecessors);

}  // namespace gguflow::exec
