// The machine's streaming read bandwidth, measured in-process so that benchmark figures can be
// put against the memory roofline of the very machine (and moment) they were taken on.
//
// Method: a buffer far larger than the last-level cache (default 256 MiB, filled so its pages
// are resident) is read once as a warm-up, then `repetitions` times; each pass is split into
// 4 MiB chunks across the threads of a tbb::task_arena of `threads` threads, each chunk summed
// with 32-byte vector loads and four independent accumulators (enough to saturate the memory
// system, cheap enough not to be compute-bound). Reported: bytes read per second of each pass
// and their median.
#pragma once

#include <cstddef>
#include <vector>

namespace gguflow::bench {

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
