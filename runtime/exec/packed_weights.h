// Owner of the packed (row-interleaved) copies of a session's matmul weights.
//
// A kernel plugin may offer a packed layout for some weight types (GgufflowKernels::pack_rows,
// plugins/abi/kernel_abi.h): the same bytes as the GGUF rows, reordered so that one pass feeds
// several rows, with results equal bit for bit to the row-major kernels. For those weights the
// session multiplies a packed copy made once at bind time, and the GGUF pages the copy replaces
// are dropped from the process (madvise DONTNEED on the read-only mapping: the file's page
// cache keeps them, and any later reader faults them back in), so resident memory stays about
// one copy of the weights.
//
// Packing is on by default; GGUFLOW_PACK_WEIGHTS=0 in the environment turns it off (for A/B
// measurements: the results are the same, only the speed differs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "ops/weight_view.h"
#include "plugins/abi/kernel_abi.h"

namespace gguflow::exec {

class PackedWeights {
 public:
  explicit PackedWeights(bool enabled) : enabled_(enabled) {}

  // True unless GGUFLOW_PACK_WEIGHTS is set to 0 / off / false.
  static bool enabled_by_environment();

  // `w` itself when the kernels have no packed layout for its type (or packing is off, or the
  // rows do not fill whole groups); else a view of its packed copy (pack_rows set), made on
  // the first call for this weight and shared by later calls.
  ops::WeightView packed(const GgufflowKernels& k, const ops::WeightView& w);

  size_t bytes() const { return bytes_; }  // total bytes of the packed copies

 private:
  // Bytes for one packed copy, 64-byte aligned, from chunks of at least kChunkBytes: one
  // allocation per weight would round each small matrix up to a 2 MiB huge page.
  std::byte* allocate(size_t bytes);

  struct Free {
    void operator()(std::byte* p) const;
  };
  static constexpr size_t kChunkBytes = size_t{32} << 20;
  bool enabled_;
  std::vector<std::unique_ptr<std::byte, Free>> chunks_;  // 2 MiB aligned (huge pages)
  std::byte* next_ = nullptr;                             // free space of the last chunk:
  size_t left_ = 0;                                       // [next_, next_ + left_)
  std::map<const void*, const std::byte*> copies_;        // packed copy by row-major data
  size_t bytes_ = 0;
};

}  // namespace gguflow::exec
