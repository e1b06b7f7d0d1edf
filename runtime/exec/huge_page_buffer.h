// Large buffers on 2 MiB boundaries with transparent huge pages asked for: the packed weight
// copies and the KV caches, which every decode step reads across hundreds of MiB.
//
// Why: with 4 KiB pages a step touches more pages than the data TLB holds (an 8-sequence step
// of the Qwen2.5-0.5B-shaped model reads each sequence's keys and values of 24 layers, a few
// KiB per head and page), and every miss walks the page table. Huge pages are advice only
// (where THP is in "madvise" mode, Debian's default); refused or unavailable, the buffer
// works the same with small pages.
#pragma once

#include <cstddef>
#include <memory>

namespace gguflow::exec {

struct HugePageFree {
  void operator()(std::byte* p) const;
};
using HugePageBuffer = std::unique_ptr<std::byte, HugePageFree>;

// At least `bytes` bytes (> 0), uninitialized; nullptr when the memory cannot be had. A huge page is
// zeroed by the kernel when first touched, 2 MiB at a time.
HugePageBuffer allocate_huge_page_buffer(size_t bytes);

}  // namespace gguflow::exec
