// Assigns every activation and scratch buffer of a graph an offset in one preallocated arena,
// reusing memory between buffers whose lifetimes cannot overlap.
//
// The flow graph runs independent nodes concurrently, so "lifetime" is not an interval of the
// topological order: buffer B may take over A's memory only when every node that touches A
// (its producer and all its users) is a strict ancestor of B's producer in the dependency
// graph, i.e. has certainly finished before B is written, whatever the schedule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gguflow::exec {

struct BufferRequest {
  int producer = 0;        // node index that writes the buffer first
  std::vector<int> users;  // node indices that read it (may include the producer for scratch)
  size_t bytes = 0;
  bool pinned = false;     // never reused (graph outputs: read after the step ends)
};

struct BufferPlan {
  std::vector<size_t> offsets;  // per request, bytes from the arena start (64-byte aligned)
  size_t arena_bytes = 0;
};

// `predecessors[n]`: the nodes n depends on directly (any order). Nodes are numbered in a
// topological order (every predecessor has a smaller index).
BufferPlan plan_buffers(const std::vector<std::vector<int>>& predecessors,
                        const std::vector<BufferRequest>& requests);

}  // namespace gguflow::exec
