// The f32 dot product of the kernel table's dot_f32, shared by the plugin sources that must give
// its bits (kv_dot_rows over f32 rows). Included after kernels_internal.h.
#pragma once

#include "plugins/kernels/kernels_internal.h"

namespace gguflow::kernels {

// out[k] = q . rows[k][0, n) for k in [0, K): MulAdd over the whole vectors into one
// accumulator per row, SumOfLanes, then a scalar multiply and add per tail element. The
// operations of each result do not depend on K; K > 1 shares the loads of q and overlaps the
// reductions of several rows.
template <int K>
inline void DotF32Rows(const float* q, const float* const* rows, int64_t n, float* out) {
  using DF = hn::ScalableTag<float>;
  const DF df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  hn::Vec<DF> acc[K];
  for (int k = 0; k < K; ++k) acc[k] = hn::Zero(df);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto vq = hn::LoadU(df, q + i);
    for (int k = 0; k < K; ++k) acc[k] = hn::MulAdd(vq, hn::LoadU(df, rows[k] + i), acc[k]);
  }
  for (int k = 0; k < K; ++k) {
    float sum = hn::GetLane(hn::SumOfLanes(df, acc[k]));
    for (int64_t e = i; e < n; ++e) sum += q[e] * rows[k][e];
    out[k] = sum;
  }
}

}  // namespace gguflow::kernels
