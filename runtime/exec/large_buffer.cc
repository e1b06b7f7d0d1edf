#include "runtime/exec/large_buffer.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>

namespace gguflow::exec {

void LargeBufferFree::operator()(std::byte* p) const { std::free(p); }

LargeBuffer allocate_large_buffer(size_t bytes, HugePages huge_pages) {
  constexpr size_t kHugePage = size_t{2} << 20;
  if (bytes == 0 || bytes > SIZE_MAX - kHugePage) return nullptr;
  const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  LargeBuffer buffer(static_cast<std::byte*>(std::aligned_alloc(kHugePage, rounded)));
#ifdef MADV_HUGEPAGE
  if (buffer && huge_pages == HugePages::kAdvise) ::madvise(buffer.get(), rounded, MADV_HUGEPAGE);
#else
  (void)huge_pages;
#endif
  return buffer;
}

}  // namespace gguflow::exec
