// ops/parallel.h on runtime/exec/tbb_parallel.h: the ranges cover [0, n) once, none is shorter than asked (so
// a thread's share of a matmul never drops under ops::kMinShareWork), packed-group cuts stay on
// group multiples, and small work runs inline on the calling thread.
#include <algorithm>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <oneapi/tbb/task_arena.h>

#include "ops/parallel.h"
#include "runtime/exec/tbb_parallel.h"

namespace gguflow::exec {
namespace {

struct Ranges {
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> list;
  std::vector<std::thread::id> threads;
  void add(int64_t b, int64_t e) {
    std::lock_guard<std::mutex> lock(mutex);
    list.emplace_back(b, e);
    threads.push_back(std::this_thread::get_id());
  }
  // Sorted ranges; fails the test unless they tile [0, n) exactly.
  std::vector<std::pair<int64_t, int64_t>> tiling(int64_t n) {
    std::sort(list.begin(), list.end());
    int64_t next = 0;
    for (const auto& [b, e] : list) {
      EXPECT_EQ(b, next);
      EXPECT_LT(b, e);
      next = e;
    }
    EXPECT_EQ(next, n);
    return list;
  }
};

TEST(ParallelRows, PiecesAreAtLeastTheMinimum) {
  tbb::task_arena arena(2);
  for (int64_t n : {7, 8, 15, 16, 100, 1000}) {
    Ranges r;
    arena.execute([&] { ops::parallel_rows(tbb_parallel(), n, 4, [&](int64_t b, int64_t e) { r.add(b, e); }); });
    const auto pieces = r.tiling(n);
    for (const auto& [b, e] : pieces) EXPECT_GE(e - b, 4) << "n " << n;
    if (n < 8) {
      EXPECT_EQ(pieces.size(), 1u) << "n " << n;
    } else if (n >= 100) {
      EXPECT_GT(pieces.size(), 1u) << "n " << n;
    }
  }
}

TEST(ParallelRows, OneThreadRunsInlineAsOneRange) {
  tbb::task_arena arena(1);
  Ranges r;
  arena.execute([&] { ops::parallel_rows(tbb_parallel(), 1000, 4, [&](int64_t b, int64_t e) { r.add(b, e); }); });
  ASSERT_EQ(r.tiling(1000).size(), 1u);
}

TEST(ParallelRowUnits, CutsOnUnitsAndKeepsEachShareOverTheWorkFloor) {
  tbb::task_arena arena(2);
  // 4864 rows of 616 bytes in groups of 8, one activation row: shares of >= 128 KiB.
  Ranges r;
  arena.execute([&] { ops::parallel_row_units(tbb_parallel(), 4864, 8, 616, 1, [&](int64_t b, int64_t e) { r.add(b, e); }); });
  const auto pieces = r.tiling(4864);
  EXPECT_GT(pieces.size(), 1u);
  for (const auto& [b, e] : pieces) {
    EXPECT_EQ(b % 8, 0);
    EXPECT_GE(static_cast<int64_t>(e - b) * 616, ops::kMinShareWork);
  }
}

TEST(ParallelRowUnits, SmallMatrixRunsOnTheCallingThread) {
  tbb::task_arena arena(2);
  // attn_v of Qwen2.5-0.5B: 128 x 896 Q8_0, 952-byte rows (119 KiB): one range, inline.
  Ranges r;
  std::thread::id caller;
  arena.execute([&] {
    caller = std::this_thread::get_id();
    ops::parallel_row_units(tbb_parallel(), 128, 8, 952, 1, [&](int64_t b, int64_t e) { r.add(b, e); });
  });
  ASSERT_EQ(r.tiling(128).size(), 1u);
  EXPECT_EQ(r.threads[0], caller);
}

TEST(ParallelRowUnits, PrefillSplitsTheSameSmallMatrix) {
  tbb::task_arena arena(2);
  // 64 activation rows make each weight row 64 times the work: the matrix splits.
  Ranges r;
  arena.execute([&] { ops::parallel_row_units(tbb_parallel(), 128, 8, 952, 64, [&](int64_t b, int64_t e) { r.add(b, e); }); });
  EXPECT_GT(r.tiling(128).size(), 1u);
}

}  // namespace
}  // namespace gguflow::exec
