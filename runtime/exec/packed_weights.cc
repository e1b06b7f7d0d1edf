#include "runtime/exec/packed_weights.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include "ops/error.h"

namespace gguflow::exec {
namespace {

// Drops the whole pages of [data, data + bytes) from this process's resident set. The range
// lies in the model's read-only file mapping, so the data stays valid: a later read faults the
// page back in from the page cache.
void release_resident_pages(const void* data, size_t bytes, bool file_mapped) {
  // On memory that is not a file mapping (a GgufFile parsed from bytes), DONTNEED would zero
  // the pages instead.
  if (!file_mapped) return;
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

bool PackedWeights::packable(const Slot& s) const {
  const ops::WeightView& w = s.view;
  if (!enabled_ || !s.matmul || w.pack_rows != 0 || w.type >= GGML_TYPE_COUNT) return false;
  const int64_t group = k_.pack_rows[w.type];
  return group > 0 && w.n_rows % group == 0 && k_.pack && k_.mat_vec_packed &&
         k_.mat_mat_packed && k_.dequantize_row_packed;
}

const ops::WeightView* PackedWeights::slot(const ops::WeightView& w, bool matmul) {
  const auto key = std::make_tuple(w.data, w.type, w.n, w.n_rows, w.row_bytes);
  auto it = by_view_.find(key);
  if (it == by_view_.end()) it = by_view_.emplace(key, &slots_.emplace_back(Slot{w})).first;
  it->second->matmul = it->second->matmul || matmul;
  return &it->second->view;
}

void PackedWeights::pack_all() {
  const auto copy_bytes = [](const ops::WeightView& w) {  // 64-byte multiples
    return (w.row_bytes * static_cast<size_t>(w.n_rows) + 63) / 64 * 64;
  };
  size_t total = 0;
  for (const Slot& s : slots_)
    if (packable(s)) total += copy_bytes(s.view);
  if (total == 0) return;
  // Never zero-filled: packing writes every byte of every copy. Huge pages: the copies are
  // written once, front to back, and with 4 KiB pages that is one page fault per 4 KiB.
  // `gguflow run -n 2` on the Qwen2.5-0.5B-shaped Q4_K_M model (this VM, perf stat): 108,853
  // page faults and 2.44 s CPU before, 13,494 and 1.73 s with huge pages.
  LargeBuffer owned = allocate_large_buffer(total, HugePages::kAdvise);
  if (!owned) return;  // no memory for the copies: stay row-major
  std::byte* storage = owned.get();
  storage_.reserve(storage_.size() + 1);  // no throw after this point can lose `owned`
  storage_.push_back(std::move(owned));

  std::byte* next = storage;
  std::vector<std::pair<const void*, size_t>> released;  // file-mapped ranges now unused
  for (Slot& s : slots_) {
    if (!packable(s)) continue;
    ops::WeightView& w = s.view;
    const int64_t group = k_.pack_rows[w.type];
    const size_t bytes = w.row_bytes * static_cast<size_t>(w.n_rows);
    std::byte* dst = next;
    next += copy_bytes(w);
    const auto* src = static_cast<const std::byte*>(w.data);
    // Slices of ~4 MiB, each dropped from the resident set once packed: a large matrix (a
    // 139 MiB lm-head) would otherwise be resident twice at the peak. Within a slice, groups
    // are independent records packed in parallel, a few hundred rows per task.
    constexpr size_t kSliceBytes = size_t{4} << 20;
    // The kernel maps file pages around each fault (64 KiB windows), so the first reads of a
    // slice re-map the end of the slice or matrix released just before: release those again.
    constexpr size_t kFaultAroundBytes = size_t{64} << 10;
    if (!released.empty()) release_resident_pages(released.back().first, released.back().second, true);
    const int64_t slice_rows =
        std::max<int64_t>(1, static_cast<int64_t>(kSliceBytes / w.row_bytes) / group) * group;
    for (int64_t s0 = 0; s0 < w.n_rows; s0 += slice_rows) {
      const int64_t s1 = std::min(w.n_rows, s0 + slice_rows);
      tbb::parallel_for(
          tbb::blocked_range<int64_t>(s0 / group, s1 / group, std::max<int64_t>(1, 256 / group)),
          [&](const tbb::blocked_range<int64_t>& r) {
            const size_t offset = static_cast<size_t>(r.begin() * group) * w.row_bytes;
            k_.pack(w.type, src + offset, w.row_bytes, w.n, (r.end() - r.begin()) * group,
                    dst + offset);
          });
      const size_t begin = std::max(static_cast<size_t>(s0) * w.row_bytes, kFaultAroundBytes) - kFaultAroundBytes;
      release_resident_pages(src + begin, static_cast<size_t>(s1) * w.row_bytes - begin, w.file_mapped);
    }
    bytes_ += bytes;
    if (w.file_mapped) released.push_back({w.data, bytes});
    w.data = dst;
    w.pack_rows = static_cast<uint32_t>(group);
  }
  // Once more over whole matrices, for pages fault-around re-mapped at the edges above.
  for (const auto& [data, bytes] : released) release_resident_pages(data, bytes, true);
}

}  // namespace gguflow::exec
