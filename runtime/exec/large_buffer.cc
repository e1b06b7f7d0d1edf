#include "runtime/exec/large_buffer.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>

namespace gguflow::exec {

void LargeBufferFree::operator()(std::byte* p) const { std::free(p); }

LargeBuffer allocate_large_buffer(size_t bytes, HugePages huge_pages) {
  constexpr size_t kHugePage = size_t{2} << 20;
  const size_t align = huge_pages == HugePages::kAdvise ? kHugePage : 64;
  if (bytes == 0 || bytes > SIZE_MAX - align) return nullptr;
  const size_t rounded = (bytes + align - 1) / align * align;  // aligned_alloc wants a multiple
  LargeBuffer buffer(static_cast<std::byte*>(std::aligned_alloc(align, rounded)));
#ifdef MADV_HUGEPAGE
  if (buffer && huge_pages == HugePages::kAdvise) ::madvise(buffer.get(), rounded, MADV_HUGEPAGE);
#endif
  return buffer;
}

}  // namespace gguflow::exec
