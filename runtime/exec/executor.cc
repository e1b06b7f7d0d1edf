#include "runtime/exec/executor.h"

#include <oneapi/tbb/flow_graph.h>

namespace gguflow::exec {
namespace {

namespace flow = tbb::flow;

class LoopExecutor final : public Executor {
 public:
  LoopExecutor(tbb::task_arena& arena, const std::vector<BoundNode>& nodes,
               const std::vector<NodeIo>& io)
      : arena_(arena), nodes_(nodes), io_(io) {}

  void run(const StepView& step) override {
    arena_.execute([&] {
      for (size_t i = 0; i < nodes_.size(); ++i) nodes_[i].run(step, io_[i]);
    });
  }

 private:
  tbb::task_arena& arena_;
  const std::vector<BoundNode>& nodes_;
  const std::vector<NodeIo>& io_;
};

class FlowGraphExecutor final : public Executor {
 public:
  FlowGraphExecutor(tbb::task_arena& arena, const std::vector<BoundNode>& nodes,
                    const std::vector<NodeIo>& io,
                    const std::vector<std::vector<int>>& predecessors)
      : arena_(arena), nodes_(nodes), io_(io) {
    // The graph attaches to the arena it is built in, so its tasks run on the arena's threads.
    arena_.execute([&] { build(predecessors); });
  }

  ~FlowGraphExecutor() override {
    arena_.execute([&] {
      graph_->wait_for_all();
      ops_.clear();
      start_.reset();
      graph_.reset();
    });
  }

  void run(const StepView& step) override {
    step_ = step;
    arena_.execute([&] {
      start_->try_put(flow::continue_msg());
      graph_->wait_for_all();
    });
  }

 private:
  void build(const std::vector<std::vector<int>>& predecessors) {
    graph_ = std::make_unique<flow::graph>();
    start_ = std::make_unique<flow::broadcast_node<flow::continue_msg>>(*graph_);
    ops_.reserve(nodes_.size());
    for (size_t i = 0; i < nodes_.size(); ++i)
      ops_.push_back(std::make_unique<flow::continue_node<flow::continue_msg>>(
          *graph_, [this, i](const flow::continue_msg&) { nodes_[i].run(step_, io_[i]); }));
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (predecessors[i].empty()) flow::make_edge(*start_, *ops_[i]);
      for (int p : predecessors[i]) flow::make_edge(*ops_[p], *ops_[i]);
    }
  }

  tbb::task_arena& arena_;
  const std::vector<BoundNode>& nodes_;
  const std::vector<NodeIo>& io_;
  StepView step_;
  std::unique_ptr<flow::graph> graph_;
  std::unique_ptr<flow::broadcast_node<flow::continue_msg>> start_;
  std::vector<std::unique_ptr<flow::continue_node<flow::continue_msg>>> ops_;
};

}  // namespace

std::unique_ptr<Executor> make_executor(Scheduler scheduler, tbb::task_arena& arena,
                                        const std::vector<BoundNode>& nodes,
                                        const std::vector<NodeIo>& io,
                                        const std::vector<std::vector<int>>& predecessors) {
  if (scheduler == Scheduler::kTopologicalLoop)
    return std::make_unique<LoopExecutor>(arena, nodes, io);
  return std::make_unique<FlowGraphExecutor>(arena, nodes, io, predecessors);
}

}  // namespace gguflow::exec
