#include "runtime/bench/memory_bandwidth.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include "runtime/core/error.h"

namespace gguflow::bench {
namespace {

// Four u64 lanes: GCC/Clang lower it to AVX2 loads where enabled, else to pairs of SSE2 loads;
// either is far faster than memory, which is all that matters here.
typedef uint64_t U64x4 __attribute__((vector_size(32)));

constexpr size_t kChunkBytes = size_t{4} << 20;

// n_vectors: a multiple of 4 (a chunk is 4 MiB).
uint64_t sum_chunk(const U64x4* p, size_t n_vectors) {
  U64x4 a{}, b{}, c{}, d{};
  for (size_t i = 0; i < n_vectors; i += 4) {
    a += p[i];
    b += p[i + 1];
    c += p[i + 2];
    d += p[i + 3];
  }
  const U64x4 s = a + b + c + d;
  return s[0] + s[1] + s[2] + s[3];
}

// One pass over the buffer; returns seconds. `sink` keeps the sums observable.
double read_pass(tbb::task_arena& arena, const U64x4* data, size_t n_chunks,
                 std::atomic<uint64_t>& sink) {
  const size_t per_chunk = kChunkBytes / sizeof(U64x4);
  const auto start = std::chrono::steady_clock::now();
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, n_chunks, 1),
                      [&](const tbb::blocked_range<size_t>& r) {
                        uint64_t s = 0;
                        for (size_t c = r.begin(); c < r.end(); ++c)
                          s += sum_chunk(data + c * per_chunk, per_chunk);
                        sink.fetch_add(s, std::memory_order_relaxed);
                      });
  });
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

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
  const size_t n_chunks = std::max<size_t>(1, options.buffer_bytes / kChunkBytes);
  const size_t n_vectors = n_chunks * (kChunkBytes / sizeof(U64x4));
  // [n_chunks][4 MiB] of u64 lanes; written once so that every page is resident before timing.
  std::unique_ptr<U64x4[]> buffer(new U64x4[n_vectors]);
  for (size_t i = 0; i < n_vectors; ++i) buffer[i] = U64x4{i, i + 1, i + 2, i + 3};

  tbb::task_arena arena(options.threads);
  std::atomic<uint64_t> sink{0};
  read_pass(arena, buffer.get(), n_chunks, sink);  // warm-up: threads started, TLB filled
  BandwidthResult result;
  result.threads = options.threads;
  const double bytes = static_cast<double>(n_chunks * kChunkBytes);
  for (int r = 0; r < options.repetitions; ++r)
    result.bytes_per_s.push_back(bytes / read_pass(arena, buffer.get(), n_chunks, sink));
  GGUFLOW_CHECK(sink.load() != 0);  // the sums were really computed
  result.median = median_of(result.bytes_per_s);
  result.min = *std::min_element(result.bytes_per_s.begin(), result.bytes_per_s.end());
  result.max = *std::max_element(result.bytes_per_s.begin(), result.bytes_per_s.end());
  return result;
}

}  // namespace gguflow::bench
