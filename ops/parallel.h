// How an op splits independent work items (output rows, attention heads) across threads,
// without knowing the thread pool: the executor implements `Parallel` (oneTBB in
// runtime/exec/tbb_parallel.h), ops call the helpers below. Callers guarantee that every item's
// result is computed by the same sequence of operations wherever the split falls, so results do
// not depend on the thread count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace gguflow::ops {

// A non-owning reference to a callable body(begin, end): one indirect call per piece, no
// allocation (std::function would allocate for captures larger than two pointers).
class RangeBody {
 public:
  template <typename Body,
            typename = std::enable_if_t<!std::is_same_v<std::decay_t<Body>, RangeBody>>>
  RangeBody(const Body& body)  // NOLINT(google-explicit-constructor): a parameter adapter
      : object_(&body), call_([](const void* o, int64_t b, int64_t e) {
          (*static_cast<const Body*>(o))(b, e);
        }) {}
  void operator()(int64_t begin, int64_t end) const { call_(object_, begin, end); }

 private:
  const void* object_;
  void (*call_)(const void*, int64_t, int64_t);
};

class Parallel {
 public:
  virtual ~Parallel() = default;
  // Threads that may run pieces at once (the executor's arena size), >= 1.
  virtual int concurrency() const = 0;
  // 0 .. concurrency() - 1 for the calling thread: the index of its private scratch.
  virtual int thread_index() const = 0;
  // Calls body(begin, end) over disjoint pieces covering [0, n), each of at least `min_piece`
  // items, some of them concurrently; returns when all are done. n >= 2 * min_piece.
  virtual void split(int64_t n, int64_t min_piece, RangeBody body) const = 0;
};

// Runs body over [0, n) in pieces of at least `min_chunk` items; inline when n is under two
// chunks or there is one thread.
template <typename Body>
void parallel_rows(const Parallel& par, int64_t n, int64_t min_chunk, const Body& body) {
  min_chunk = std::max<int64_t>(min_chunk, 1);
  if (n < 2 * min_chunk || par.concurrency() == 1) {
    if (n > 0) body(int64_t{0}, n);
    return;
  }
  par.split(n, min_chunk, RangeBody(body));
}

// A chunk size that leaves 4-8 chunks of `n` items per thread (load balance when one thread is
// slowed: a preempted vCPU's chunks are taken by the other) but none under `min_chunk`.
inline int64_t grain_for(const Parallel& par, int64_t n, int64_t min_chunk) {
  return std::max<int64_t>(min_chunk, n / (8 * par.concurrency()) + 1);
}

// Least elements a piece of a row-wise elementwise op or norm gets (add, silu_mul, rmsnorm, ...):
// below it the fork/join (~1 us) costs about what the piece does. Run serially, silu_mul, add
// and rmsnorm were ~3 % of a 2-thread pp512 profile's samples (Qwen2.5-0.5B Q4_K_M) that did not
// halve with the second thread while the matmuls did.
constexpr int64_t kMinElementwisePiece = int64_t{16} << 10;

// body(r0, r1) over rows [0, n_rows) of `row` elements each, in pieces of at least
// kMinElementwisePiece elements (a decode step's single row: inline). Each row is computed by
// the same operations whatever the split, as every caller's per-row loop already guarantees.
template <typename Body>
void parallel_elementwise_rows(const Parallel& par, int64_t n_rows, int64_t row, const Body& body) {
  const int64_t min_rows = std::max<int64_t>(1, kMinElementwisePiece / std::max<int64_t>(1, row));
  parallel_rows(par, n_rows, grain_for(par, n_rows, min_rows), body);
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
void parallel_row_units(const Parallel& par, int64_t n_rows, int64_t unit, size_t row_bytes,
                        int64_t n_act, const Body& body) {
  const int64_t n_units = (n_rows + unit - 1) / unit;
  const int64_t unit_work =
      std::max<int64_t>(1, unit * static_cast<int64_t>(row_bytes) * std::max<int64_t>(1, n_act));
  const int64_t min_units =
      std::max((16 + unit - 1) / unit, (kMinShareWork + unit_work - 1) / unit_work);
  parallel_rows(par, n_units, grain_for(par, n_units, min_units),
                [&](int64_t u0, int64_t u1) { body(u0 * unit, std::min(n_rows, u1 * unit)); });
}

}  // namespace gguflow::ops
