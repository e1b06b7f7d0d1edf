// The matmul weights of a session, and their packed (row-interleaved) copies.
//
// A kernel plugin may offer a packed layout for some weight types (GguflowKernels::pack_rows,
// plugins/abi/kernel_abi.h): the same bytes as the GGUF rows, reordered so that one pass feeds
// several rows, with the row-major kernels' results to float rounding (~1e-7 relative). Decode
// (one token per step) is where it pays: Q5_0 mat_vec runs ~2x faster.
//
// Packing costs a copy of those weights in fresh memory (for Qwen2.5-0.5B Q4_K_M: 165 MiB,
// ~0.1-0.2 s on bare metal, ~1.5 s on a VM where first-touch page faults are slow), which
// prompt-only work (embeddings, scoring a prompt, the first token of a reply) never recovers.
// So nodes multiply through a slot that holds the row-major view until the session packs
// (Session::pack_weights(): `gguflow run` and `bench` right after load, a server before its
// first step, otherwise the first decode step); from then on the slot holds the packed copy.
// On x86 the row-major products of the packed types run on packed panels (kernels_panels.cc),
// so both give the same bits; elsewhere they differ by float rounding.
//
// After packing a weight, the GGUF pages it replaces are dropped from the process (madvise
// DONTNEED on the read-only mapping: the page cache keeps them and any later reader faults them
// back in), so resident memory stays about one copy of the weights.
//
// Packing is on by default; GGUFLOW_PACK_WEIGHTS=0 in the environment turns it off (for A/B
// measurements: the results agree to float rounding, only the speed differs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <tuple>
#include <memory>
#include <vector>

#include "ops/weight_view.h"
#include "plugins/abi/kernel_abi.h"
#include "runtime/exec/large_buffer.h"

namespace gguflow::exec {

class PackedWeights {
 public:
  PackedWeights(const GguflowKernels& kernels, bool enabled) : k_(kernels), enabled_(enabled) {}

  // True unless GGUFLOW_PACK_WEIGHTS is set to 0 / off / false.
  static bool enabled_by_environment();

  // The slot a node reads `w` through: row-major now; after pack_all(), packed when some
  // matmul multiplies it (`matmul`) and the kernels have a packed layout for its type. One slot
  // per weight, shared by the nodes that use it (an embedding table tied to the lm-head is
  // then looked up in the packed copy, so the GGUF pages stay released); the pointer stays
  // valid for the lifetime of this object.
  const ops::WeightView* slot(const ops::WeightView& w, bool matmul);

  // Packs every packable weight not packed yet (in parallel, on the calling arena's threads).
  // Must not run while nodes may read the slots. Packing is an optimization: when the memory
  // for the copies cannot be had, every slot stays row-major (same results, slower).
  void pack_all();

  size_t bytes() const { return bytes_; }  // total bytes of the packed copies so far

 private:
  struct Slot {
    ops::WeightView view;
    bool matmul = false;  // some matmul multiplies it
  };
  bool packable(const Slot& s) const;

  const GguflowKernels& k_;
  bool enabled_;
  std::deque<Slot> slots_;                  // stable addresses
  // Slot of each row-major weight, by (data, type, n, n_rows, row_bytes): two tensors of a
  // (crafted) file may share bytes but not a shape.
  std::map<std::tuple<const void*, uint32_t, int64_t, int64_t, size_t>, Slot*> by_view_;
  // One allocation per pack_all() holding every copy it makes, 2 MiB aligned (huge pages):
  // separate allocations would each end in a partly used huge page.
  std::vector<LargeBuffer> storage_;
  size_t bytes_ = 0;
};

}  // namespace gguflow::exec
