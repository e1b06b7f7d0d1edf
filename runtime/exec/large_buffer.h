// Large uninitialized buffers, optionally on transparent huge pages: the packed weight copies
// (always) and the KV caches (sessions of several slots).
//
// Why huge pages: with 4 KiB pages a step can touch more pages than the data TLB holds (an
// 8-sequence decode step of the Qwen2.5-0.5B-shaped model reads each sequence's keys and values
// of 24 layers, a few KiB per head, from DRAM), and every miss walks the page table. The cost:
// a huge page becomes resident, zeroed by the kernel, 2 MiB at a time on first touch, so a
// single sequence's cache (whose few pages per layer the TLB holds anyway) takes no advice.
// Advice only (where THP is in "madvise" mode, Debian's default); refused or unavailable, the
// buffer works the same with small pages.
#pragma once

#include <cstddef>
#include <memory>

namespace gguflow::exec {

struct LargeBufferFree {
  void operator()(std::byte* p) const;
};
using LargeBuffer = std::unique_ptr<std::byte, LargeBufferFree>;

enum class HugePages { kNo, kAdvise };

// At least `bytes` bytes (> 0), uninitialized; nullptr when the memory cannot be had. kAdvise:
// on 2 MiB boundaries with MADV_HUGEPAGE. kNo: 64-byte aligned, what the system gives any
// allocation of its size (small pages where THP is in "madvise" mode).
LargeBuffer allocate_large_buffer(size_t bytes, HugePages huge_pages);

}  // namespace gguflow::exec
