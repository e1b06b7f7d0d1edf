// Row-major matrix products (the ABI's mat_vec / mat_mat on GGUF rows) through the packed
// kernels: each panel of a few 8-row groups is packed on the fly into a stack buffer and
// multiplied with every activation row by MatMulPacked (kernels_packed*.cc).
//
// Why: prefill runs before a session packs its weights (runtime/exec/packed_weights.h packs at
// the first decode step), so the prompt used the row-major kernels, which multiply one weight
// row by a tile of activations and spend a float convert, multiply and 8-lane fused add per
// (row, activation, block): the float side, not the integer dot, bounded prefill. The packed
// kernels do that float work once per 8 rows. Packing a panel costs about one pass over its
// bytes, paid once per call and shared by all n_act activation rows (pp64: 1/64 of the
// products; mat_vec pays it whole, see below).
//
// Results: a row's bits are those of the packed kernels for that row and activation (each row
// in its own lane, exact integer block dots, one fused multiply-add per block in block order),
// whatever the row range, the panel or n_act. mat_vec takes this path too, so mat_mat still
// equals n_act mat_vec calls bit for bit; row-major and packed weights now give the same bits.
// Cost: a row-major mat_vec packs every panel it reads (~1.3x the time of the former row-major
// decode kernel on Q8_0). Decode runs on packed weights unless GGUFLOW_PACK_WEIGHTS=0.
//
// Only for the types with a packed layout on this target (PackedGroupRows > 0: x86 AVX2 and up)
// and rows short enough for one group to fit the panel buffer; everything else (and the scalar
// reference plugin) keeps the row-major kernels, decided by (type, n) alone so that mat_vec and
// mat_mat always take the same path.
#include <algorithm>
#include <cstring>

#include "plugins/kernels/kernels_internal.h"

namespace gguflow::kernels {
namespace {

constexpr int64_t kGroupRows = kPackedGroupRows;
// Stack bytes of one panel: 16 groups of Q8_0 rows of 896 (a slab that stays in L2 while every
// activation row passes), one group of Q8_0 rows up to ~15000 elements. Plugin calls run on
// oneTBB workers, whose stacks are 4 MiB; a call uses two such buffers (panel and scratch).
constexpr size_t kPanelBytes = size_t{128} << 10;

// Groups per panel, 0 when one group does not fit (rows too long: the row-major kernels).
int64_t PanelGroups(size_t w_row_bytes) {
  return std::min<int64_t>(16, static_cast<int64_t>(kPanelBytes / (kGroupRows * w_row_bytes)));
}

// Packs groups [g0, g1) of the row-major matrix w, limited to rows [row_begin, row_end), into
// `panel` (group g at (g - g0) * 8 * w_row_bytes). Rows of a group outside the range are read as
// zero blocks: they may lie outside the matrix, and their results are never stored.
void PackPanel(uint32_t w_type, const MatMulArgs& a, int64_t g0, int64_t g1, uint8_t* panel,
               uint8_t* scratch) {
  const size_t group_bytes = kGroupRows * a.w_row_bytes;
  for (int64_t g = g0; g < g1; ++g) {
    const int64_t r0 = std::max(a.row_begin, g * kGroupRows), r1 = std::min(a.row_end, (g + 1) * kGroupRows);
    const char* src = static_cast<const char*>(a.w) + g * group_bytes;
    if (r1 - r0 < kGroupRows) {  // a group cut by the range: copy its rows beside zero rows
      std::memset(scratch, 0, group_bytes);
      std::memcpy(scratch + (r0 - g * kGroupRows) * a.w_row_bytes, static_cast<const char*>(a.w) + r0 * a.w_row_bytes,
                  static_cast<size_t>(r1 - r0) * a.w_row_bytes);
      src = reinterpret_cast<const char*>(scratch);
    }
    PackWeights(w_type, src, a.w_row_bytes, a.n, kGroupRows, panel + (g - g0) * group_bytes);
  }
}

}  // namespace

bool MatMulViaPanels(uint32_t w_type, const MatMulArgs& args) {
  if (PackedGroupRows(w_type) != kGroupRows) return false;
  const int64_t groups = PanelGroups(args.w_row_bytes);
  if (groups < 1) return false;
  alignas(64) uint8_t panel[kPanelBytes];    // [groups][8 rows] packed, row bytes as GGUF
  alignas(64) uint8_t scratch[kPanelBytes];  // one cut group, row-major (groups >= 1: it fits)
  for (int64_t g0 = args.row_begin / kGroupRows; g0 * kGroupRows < args.row_end; g0 += groups) {
    const int64_t g1 = std::min(g0 + groups, (args.row_end + kGroupRows - 1) / kGroupRows);
    PackPanel(w_type, args, g0, g1, panel, scratch);
    // The panel as a packed matrix whose row 0 is row 8 * g0; y shifted to match.
    MatMulArgs p = args;
    p.w = panel;
    p.row_begin = std::max(args.row_begin, g0 * kGroupRows) - g0 * kGroupRows;
    p.row_end = std::min(args.row_end, g1 * kGroupRows) - g0 * kGroupRows;
    p.y = args.y + g0 * kGroupRows;
    MatMulPacked(w_type, p);
  }
  return true;
}

}  // namespace gguflow::kernels
