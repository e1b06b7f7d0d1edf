// runtime/bench/memory_bandwidth: the stream reader reads what it says (its checksum is the sum
// of exactly the words of the chunks asked for, wrapping at the end), rates are positive and
// finite, and bad options are errors. No timing is asserted.
#include <cmath>

#include <gtest/gtest.h>

#include "runtime/bench/memory_bandwidth.h"
#include "ops/error.h"

namespace gguflow::bench {
namespace {

constexpr size_t kChunk = StreamBuffer::kChunkBytes;
constexpr uint64_t kWords = kChunk / sizeof(uint64_t);

// The buffer holds word i = i: the sum of chunk c's words.
uint64_t chunk_sum(uint64_t c) { return kWords * c * kWords + kWords * (kWords - 1) / 2; }

TEST(StreamBuffer, RoundsToWholeChunksAndKeepsAtLeastOne) {
  EXPECT_EQ(StreamBuffer(3 * kChunk + 5).bytes(), 3 * kChunk);
  EXPECT_EQ(StreamBuffer(1).bytes(), kChunk);
}

TEST(StreamBuffer, ReadsExactlyTheChunksAskedForAndWraps) {
  StreamBuffer buffer(3 * kChunk);
  tbb::task_arena arena(2);
  // Chunks 2, 0 (wrapped), offsets rounded down to a chunk.
  const double rate = buffer.read(arena, 2 * kChunk + 100, 2 * kChunk);
  EXPECT_TRUE(std::isfinite(rate) && rate > 0) << rate;
  EXPECT_EQ(buffer.checksum(), chunk_sum(2) + chunk_sum(0));
  buffer.read_all(arena);
  EXPECT_EQ(buffer.checksum(), 2 * chunk_sum(2) + 2 * chunk_sum(0) + chunk_sum(1));
}

TEST(StreamBuffer, ReadsFromInsideItsOwnArena) {
  StreamBuffer buffer(2 * kChunk);
  tbb::task_arena arena(2);
  double rate = 0;
  arena.execute([&] { rate = buffer.read(arena, 0, kChunk); });
  EXPECT_GT(rate, 0);
  EXPECT_EQ(buffer.checksum(), chunk_sum(0));
}

TEST(MeasureReadBandwidth, MedianLiesWithinThePasses) {
  const BandwidthResult r = measure_read_bandwidth({2, 3, 2 * kChunk});
  ASSERT_EQ(r.bytes_per_s.size(), 3u);
  EXPECT_EQ(r.threads, 2);
  EXPECT_LE(r.min, r.median);
  EXPECT_LE(r.median, r.max);
  EXPECT_GT(r.min, 0);
}

TEST(MeasureReadBandwidth, RejectsBadOptions) {
  EXPECT_THROW(measure_read_bandwidth({0, 3, kChunk}), Error);
  EXPECT_THROW(measure_read_bandwidth({1, 0, kChunk}), Error);
}

}  // namespace
}  // namespace gguflow::bench
