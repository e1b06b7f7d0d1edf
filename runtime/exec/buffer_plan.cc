#include "runtime/exec/buffer_plan.h"

#include <algorithm>

#include "ops/error.h"

namespace gguflow::exec {
namespace {

constexpr size_t kAlign = 64;

size_t align_up(size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

// Dense ancestor bitsets: ancestors[n][m] is true when m must finish before n starts.
class Ancestors {
 public:
  explicit Ancestors(const std::vector<std::vector<int>>& predecessors)
      : n_(predecessors.size()), words_((n_ + 63) / 64), bits_(n_ * words_, 0) {
    for (size_t n = 0; n < n_; ++n)
      for (int p : predecessors[n]) {
        GGUFLOW_CHECK(p >= 0 && static_cast<size_t>(p) < n);
        uint64_t* dst = row(n);
        const uint64_t* src = row(p);
        for (size_t w = 0; w < words_; ++w) dst[w] |= src[w];
        dst[p / 64] |= uint64_t{1} << (p % 64);
      }
  }
  bool is_ancestor(int m, int n) const {
    return (bits_[n * words_ + m / 64] >> (m % 64)) & 1;
  }

 private:
  uint64_t* row(size_t n) { return bits_.data() + n * words_; }
  const uint64_t* row(size_t n) const { return bits_.data() + n * words_; }
  size_t n_, words_;
  std::vector<uint64_t> bits_;
};

struct Slot {
  size_t capacity = 0;
  int occupant = -1;  // request index now holding the slot
};

}  // namespace

BufferPlan plan_buffers(const std::vector<std::vector<int>>& predecessors,
                        const std::vector<BufferRequest>& requests) {
  const Ancestors ancestors(predecessors);
  // Requests in the order their producers run (stable within a node).
  std::vector<size_t> order(requests.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return requests[a].producer < requests[b].producer;
  });

  auto finished_before = [&](const BufferRequest& old, int node) {
    if (old.pinned) return false;
    if (!ancestors.is_ancestor(old.producer, node)) return false;
    for (int u : old.users)
      if (!ancestors.is_ancestor(u, node)) return false;
    return true;
  };

  std::vector<Slot> slots;
  std::vector<size_t> slot_of(requests.size());
  for (size_t r : order) {
    const BufferRequest& req = requests[r];
    const size_t bytes = align_up(std::max<size_t>(req.bytes, 1));
    // Best fit among free slots: the smallest that holds it, else the largest (grown).
    int best = -1;
    for (size_t s = 0; s < slots.size(); ++s) {
      if (!finished_before(requests[slots[s].occupant], req.producer)) continue;
      if (best < 0) {
        best = static_cast<int>(s);
        continue;
      }
      const Slot& b = slots[best];
      const bool fits = slots[s].capacity >= bytes, best_fits = b.capacity >= bytes;
      if ((fits && (!best_fits || slots[s].capacity < b.capacity)) ||
          (!fits && !best_fits && slots[s].capacity > b.capacity))
        best = static_cast<int>(s);
    }
    if (best < 0) {
      slots.push_back({bytes, static_cast<int>(r)});
      best = static_cast<int>(slots.size() - 1);
    } else {
      slots[best].capacity = std::max(slots[best].capacity, bytes);
      slots[best].occupant = static_cast<int>(r);
    }
    slot_of[r] = static_cast<size_t>(best);
  }

  BufferPlan plan;
  std::vector<size_t> slot_offset(slots.size());
  for (size_t s = 0; s < slots.size(); ++s) {
    slot_offset[s] = plan.arena_bytes;
    plan.arena_bytes += slots[s].capacity;
  }
  plan.offsets.resize(requests.size());
  for (size_t r = 0; r < requests.size(); ++r) plan.offsets[r] = slot_offset[slot_of[r]];
  return plan;
}

}  // namespace gguflow::exec
