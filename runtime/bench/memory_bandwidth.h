// The machine's streaming read bandwidth, measured in-process so that benchmark figures can be
// put against the memory roofline of the very machine (and moment) they were taken on.
//
// Method: a buffer far larger than the last-level cache (default 256 MiB, filled so its pages
// are resident) is read in 4 MiB chunks split across the threads of a tbb::task_arena, each
// chunk summed with 64-bit loads into four independent accumulators. That plain loop streams at
// least as fast as any reader tried on the x86 machines here (AVX2 loads: the same; GCC's
// lowering of 32-byte generic vectors to SSE2 without -mavx: 10-20 % slower, which once put a
// decode run at 111 % of its "roofline"), and it is far from compute-bound.
//
// `gguflow bench` reads the whole buffer once as a warm-up, then `repetitions` times, and
// reports each pass and their median. kernels_bench reads slices of it between its own
// measurements (StreamBuffer::read).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <oneapi/tbb/task_arena.h>

namespace gguflow::bench {

// A resident buffer of whole 4 MiB chunks to stream from.
class StreamBuffer {
 public:
  static constexpr size_t kChunkBytes = size_t{4} << 20;

  // At least one chunk; `bytes` is rounded down to whole chunks.
  explicit StreamBuffer(size_t bytes);

  size_t bytes() const { return n_chunks_ * kChunkBytes; }

  // Reads `bytes` (rounded down to whole chunks, at least one) starting at byte `offset`
  // (rounded down to a chunk, wrapping at the end) with the threads of `arena`; returns bytes
  // per second. Called from inside `arena` it runs there without re-entering.
  double read(tbb::task_arena& arena, size_t offset, size_t bytes);

  // Reads the whole buffer once; bytes per second.
  double read_all(tbb::task_arena& arena) { return read(arena, 0, bytes()); }

  // Sum of every word read so far (non-zero once anything was read: the reads really happened).
  uint64_t checksum() const { return sink_; }

 private:
  size_t n_chunks_;
  std::unique_ptr<uint64_t[]> data_;  // [n_chunks_][kChunkBytes / 8]
  uint64_t sink_ = 0;                 // keeps the sums observable
};

struct BandwidthOptions {
  int threads = 1;
  int repetitions = 5;
  size_t buffer_bytes = size_t{256} << 20;
};

struct BandwidthResult {
  int threads = 0;
  std::vector<double> bytes_per_s;  // one per repetition, in measurement order
  double median = 0, min = 0, max = 0;
};

// Allocates the buffer, measures, frees the buffer (so it does not count toward later peak-RSS
// readings once the high-water mark is reset). Throws gguflow::Error for threads or
// repetitions < 1.
BandwidthResult measure_read_bandwidth(const BandwidthOptions& options);

// Median of a non-empty list (mean of the middle two for an even count).
double median_of(std::vector<double> values);

}  // namespace gguflow::bench
