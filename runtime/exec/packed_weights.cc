#include "runtime/exec/packed_weights.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include "runtime/core/error.h"

namespace gguflow::exec {
namespace {

// Drops the whole pages of [data, data + bytes) from this process's resident set. The range
// lies in the model's read-only file mapping, so the data stays valid: a later read faults the
// page back in from the page cache.
void release_resident_pages(const void* data, size_t bytes) {
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  const auto end = (reinterpret_cast<uintptr_t>(data) + bytes) / page * page;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace

bool PackedWeights::enabled_by_environment() {
  const char* v = std::getenv("GGUFLOW_PACK_WEIGHTS");
  if (!v) return true;
  const std::string s(v);
  return !(s == "0" || s == "off" || s == "false");
}

void PackedWeights::Free::operator()(std::byte* p) const { std::free(p); }

std::byte* PackedWeights::allocate(size_t bytes) {
  bytes = (bytes + 63) / 64 * 64;
  if (bytes > left_) {
    // 2 MiB alignment lets the kernel back the chunk with transparent huge pages (fewer TLB
    // misses while decode streams through it). Never zero-filled: packing writes every byte.
    constexpr size_t kAlign = size_t{2} << 20;
    const size_t chunk = (std::max(bytes, kChunkBytes) + kAlign - 1) / kAlign * kAlign;
    auto* p = static_cast<std::byte*>(std::aligned_alloc(kAlign, chunk));
    if (!p) throw std::bad_alloc();
    chunks_.emplace_back(p);
    next_ = p;
    left_ = chunk;
  }
  std::byte* out = next_;
  next_ += bytes;
  left_ -= bytes;
  return out;
}

bool PackedWeights::packable(const ops::WeightView& w) const {
  if (!enabled_ || w.pack_rows != 0 || w.type >= GGML_TYPE_COUNT) return false;
  const int64_t group = k_.pack_rows[w.type];
  return group > 0 && w.n_rows % group == 0 && k_.pack && k_.mat_vec_packed && k_.mat_mat_packed;
}

const ops::WeightView* PackedWeights::slot(const ops::WeightView& w) {
  if (auto it = by_data_.find(w.data); it != by_data_.end()) return it->second;
  ops::WeightView* s = &slots_.emplace_back(w);
  by_data_.emplace(w.data, s);
  return s;
}

void PackedWeights::pack_all() {
  for (ops::WeightView& w : slots_) {
    if (!packable(w)) continue;
    const int64_t group = k_.pack_rows[w.type];
    const size_t bytes = w.row_bytes * static_cast<size_t>(w.n_rows);
    std::byte* dst = allocate(bytes);
    // Groups are independent records: pack them in parallel, a few hundred rows per task.
    const int64_t n_groups = w.n_rows / group;
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, n_groups, std::max<int64_t>(1, 256 / group)),
                      [&](const tbb::blocked_range<int64_t>& r) {
                        const size_t offset = static_cast<size_t>(r.begin() * group) * w.row_bytes;
                        k_.pack(w.type, static_cast<const std::byte*>(w.data) + offset,
                                w.row_bytes, w.n, (r.end() - r.begin()) * group, dst + offset);
                      });
    release_resident_pages(w.data, bytes);
    bytes_ += bytes;
    w.data = dst;
    w.pack_rows = static_cast<uint32_t>(group);
  }
}

}  // namespace gguflow::exec
