#include "runtime/bench/memory_bandwidth.h"

#include <algorithm>
#include <atomic>
#include <chrono>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include "ops/error.h"

namespace gguflow::bench {
namespace {

constexpr size_t kChunkWords = StreamBuffer::kChunkBytes / sizeof(uint64_t);

// Sum of one chunk, four independent chains (see the header for why this loop).
uint64_t sum_chunk(const uint64_t* p) {
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (size_t i = 0; i < kChunkWords; i += 4) {
    s0 += p[i];
    s1 += p[i + 1];
    s2 += p[i + 2];
    s3 += p[i + 3];
  }
  return s0 + s1 + s2 + s3;
}

}  // namespace

StreamBuffer::StreamBuffer(size_t bytes)
    : n_chunks_(std::max<size_t>(1, bytes / kChunkBytes)),
      data_(new uint64_t[n_chunks_ * kChunkWords]) {
  // Written once so that every page is resident before anything is timed.
  for (size_t i = 0; i < n_chunks_ * kChunkWords; ++i) data_[i] = i;
}

double StreamBuffer::read(tbb::task_arena& arena, size_t offset, size_t bytes) {
  const size_t first = offset / kChunkBytes, count = std::max<size_t>(1, bytes / kChunkBytes);
  std::atomic<uint64_t> total{0};
  const auto start = std::chrono::steady_clock::now();
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, count, 1), [&](const tbb::blocked_range<size_t>& r) {
      uint64_t s = 0;
      for (size_t c = r.begin(); c < r.end(); ++c) s += sum_chunk(data_.get() + (first + c) % n_chunks_ * kChunkWords);
      total.fetch_add(s, std::memory_order_relaxed);
    });
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  sink_ += total.load();
  return static_cast<double>(count * kChunkBytes) / seconds;
}

double median_of(std::vector<double> values) {
  GGUFLOW_CHECK(!values.empty());
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

BandwidthResult measure_read_bandwidth(const BandwidthOptions& options) {
  if (options.threads < 1)
    throw error("bandwidth: thread count must be at least 1, found ", options.threads);
  if (options.repetitions < 1)
    throw error("bandwidth: repetitions must be at least 1, found ", options.repetitions);
  StreamBuffer buffer(options.buffer_bytes);
  tbb::task_arena arena(options.threads);
  buffer.read_all(arena);  // warm-up: threads started, TLB filled
  BandwidthResult result;
  result.threads = options.threads;
  for (int r = 0; r < options.repetitions; ++r) result.bytes_per_s.push_back(buffer.read_all(arena));
  GGUFLOW_CHECK(buffer.checksum() != 0);
  result.median = median_of(result.bytes_per_s);
  result.min = *std::min_element(result.bytes_per_s.begin(), result.bytes_per_s.end());
  result.max = *std::max_element(result.bytes_per_s.begin(), result.bytes_per_s.end());
  return result;
}

}  // namespace gguflow::bench
