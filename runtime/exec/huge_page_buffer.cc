#include "runtime/exec/huge_page_buffer.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>

namespace gguflow::exec {

void HugePageFree::operator()(std::byte* p) const { std::free(p); }

HugePageBuffer allocate_huge_page_buffer(size_t bytes) {
  constexpr size_t kHugePage = size_t{2} << 20;
  if (bytes == 0 || bytes > SIZE_MAX - kHugePage) return nullptr;
  const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  HugePageBuffer buffer(static_cast<std::byte*>(std::aligned_alloc(kHugePage, rounded)));
#ifdef MADV_HUGEPAGE
  if (buffer) ::madvise(buffer.get(), rounded, MADV_HUGEPAGE);
#endif
  return buffer;
}

}  // namespace gguflow::exec
