// The f32 dot product of the kernel table's dot_f32, shared by the plugin sources that must give
// its bits (kv_dot_rows over f32 rows). Included after kernels_internal.h.
#pragma once

#include "plugins/kernels/kernels_internal.h"

namespace gguflow::kernels {

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// The sum of a vector's 16 lanes in the tree of GCC's _mm512_reduce_add_ps, which Highway's
// SumOfLanes calls on AVX-512: the two 8-lane halves, then the two 4-lane quarters, then lanes
// (i, i + 2), then lanes 0 + 1. Written out so that ReduceLanes16x16 provably adds in the same
// tree (and a build with another compiler agrees with itself).
inline float ReduceLanes16(__m512 v) {
  const __m256 t3 = _mm256_add_ps(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)),
                                  _mm512_castps512_ps256(v));
  const __m128 t6 = _mm_add_ps(_mm256_extractf128_ps(t3, 1), _mm256_castps256_ps128(t3));
  const __m128 t8 = _mm_add_ps(t6, _mm_shuffle_ps(t6, t6, _MM_SHUFFLE(1, 0, 3, 2)));
  return _mm_cvtss_f32(t8) + _mm_cvtss_f32(_mm_shuffle_ps(t8, t8, 1));
}

// Lane j = ReduceLanes16(acc[j]) for the 16 accumulators at once: every level of that tree for
// all of them, two keys' partial sums sharing a vector (~3 vector operations a key where 16
// separate reductions cost ~8). Float addition is commutative, so each lane gets exactly the
// additions of its own ReduceLanes16.
inline __m512 ReduceLanes16x16(const __m512 acc[16]) {
  __m512 halves[8];  // key 2p's 8 half sums in lanes 0-7, key 2p+1's in lanes 8-15
  for (int p = 0; p < 8; ++p)
    halves[p] = _mm512_add_ps(_mm512_shuffle_f32x4(acc[2 * p], acc[2 * p + 1], _MM_SHUFFLE(3, 2, 3, 2)),
                              _mm512_shuffle_f32x4(acc[2 * p], acc[2 * p + 1], _MM_SHUFFLE(1, 0, 1, 0)));
  __m512 quarters[4];  // 128-bit lane i: key 4m + i's quarter sums
  for (int m = 0; m < 4; ++m)
    quarters[m] = _mm512_add_ps(_mm512_shuffle_f32x4(halves[2 * m], halves[2 * m + 1], _MM_SHUFFLE(3, 1, 3, 1)),
                                _mm512_shuffle_f32x4(halves[2 * m], halves[2 * m + 1], _MM_SHUFFLE(2, 0, 2, 0)));
  __m512 pairs[2];  // 128-bit lane m: key 8h + m's lanes (0 + 2, 1 + 3), then key 8h + 4 + m's
  for (int h = 0; h < 2; ++h)
    pairs[h] = _mm512_add_ps(_mm512_shuffle_ps(quarters[2 * h], quarters[2 * h + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm512_shuffle_ps(quarters[2 * h], quarters[2 * h + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  // 128-bit lane m: keys m, m + 4, m + 8, m + 12; then into key order.
  const __m512 sums = _mm512_add_ps(_mm512_shuffle_ps(pairs[0], pairs[1], _MM_SHUFFLE(2, 0, 2, 0)),
                                    _mm512_shuffle_ps(pairs[0], pairs[1], _MM_SHUFFLE(3, 1, 3, 1)));
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  return _mm512_permutexvar_ps(order, sums);
}
#endif

// The sum of v's lanes as every f32 dot here reduces it (Highway's SumOfLanes' tree).
template <class V>
inline float ReduceLanes(V v) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  return ReduceLanes16(v.raw);
#else
  using DF = hn::ScalableTag<float>;
  return hn::GetLane(hn::SumOfLanes(DF(), v));
#endif
}

// out[k] = q . rows[k][0, n) for k in [0, K): MulAdd over the whole vectors into one
// accumulator per row, the lanes' sum (ReduceLanes), then a scalar multiply and add per tail
// element. The operations of each result do not depend on K; K > 1 shares the loads of q and
// overlaps the reductions of several rows.
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
    float sum = ReduceLanes(acc[k]);
    for (int64_t e = i; e < n; ++e) sum += q[e] * rows[k][e];
    out[k] = sum;
  }
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// DotF32Rows for 16 rows `stride` floats apart (rows 0 .. m-1 stored to out, m <= 16; the others
// repeat row m - 1 and are dropped), with the 16 reductions done together (ReduceLanes16x16): each
// result has exactly DotF32Rows' bits. Attention's q . k over a run of cached keys. NV: q's
// whole vectors (n / 16), held in registers while the rows pass one after the other.
template <int NV>
inline void DotF32Rows16Held(const float* q, const float* row0, int64_t stride, int m, int64_t n, float* out) {
  constexpr int64_t kLanes = 16;
  __m512 vq[NV];
  for (int v = 0; v < NV; ++v) vq[v] = _mm512_loadu_ps(q + v * kLanes);
  __m512 acc[16];
  const float* row = row0;
  for (int k = 0; k < 16; ++k) {
    acc[k] = _mm512_setzero_ps();
    for (int v = 0; v < NV; ++v) acc[k] = _mm512_fmadd_ps(vq[v], _mm512_loadu_ps(row + v * kLanes), acc[k]);
    if (k + 1 < m) row += stride;
  }
  const __m512 sums = ReduceLanes16x16(acc);
  if (n == NV * kLanes) {
    _mm512_mask_storeu_ps(out, static_cast<__mmask16>((1u << m) - 1), sums);
    return;
  }
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sums);
  for (int k = 0; k < m; ++k) {
    const float* r = row0 + k * stride;
    float sum = lanes[k];
    for (int64_t e = NV * kLanes; e < n; ++e) sum += q[e] * r[e];
    out[k] = sum;
  }
}

// out[a * out_stride + b] = q_a . row_b for 4 queries q_a (q_stride floats apart) and 4 rows
// (stride floats apart), n >= 16: DotF32Rows' bits for each pair (MulAdd over the whole
// vectors into one accumulator per pair, ReduceLanes16, then the tail in order), the 16
// reductions done together. Each loaded vector of a query or a row feeds 4 multiply-adds where
// DotF32Rows16Held loads a row's vector for one: prompt attention's q . k for a block of queries.
inline void DotF32Queries4Rows4(const float* q, int64_t q_stride, const float* row0, int64_t stride, int64_t n,
                                float* out, int64_t out_stride) {
  constexpr int64_t kLanes = 16;
  __m512 acc[16];
  for (int p = 0; p < 16; ++p) acc[p] = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    __m512 rows[4];
    for (int b = 0; b < 4; ++b) rows[b] = _mm512_loadu_ps(row0 + b * stride + i);
    for (int a = 0; a < 4; ++a) {
      const __m512 vq = _mm512_loadu_ps(q + a * q_stride + i);
      for (int b = 0; b < 4; ++b) acc[a * 4 + b] = _mm512_fmadd_ps(vq, rows[b], acc[a * 4 + b]);
    }
  }
  const __m512 sums = ReduceLanes16x16(acc);  // 128-bit lane a: query a's four results
  if (i == n) {
    _mm_storeu_ps(out, _mm512_castps512_ps128(sums));
    _mm_storeu_ps(out + out_stride, _mm512_extractf32x4_ps(sums, 1));
    _mm_storeu_ps(out + 2 * out_stride, _mm512_extractf32x4_ps(sums, 2));
    _mm_storeu_ps(out + 3 * out_stride, _mm512_extractf32x4_ps(sums, 3));
    return;
  }
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sums);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      const float* qa = q + a * q_stride;
      const float* r = row0 + b * stride;
      float sum = lanes[a * 4 + b];
      for (int64_t e = i; e < n; ++e) sum += qa[e] * r[e];
      out[a * out_stride + b] = sum;
    }
}

// n >= 16: heads up to 143 wide hold q in registers; wider ones go 16 rows at a time through
// DotF32Rows.
inline void DotF32Rows16(const float* q, const float* row0, int64_t stride, int m, int64_t n, float* out) {
  switch (n / 16) {
    case 1: return DotF32Rows16Held<1>(q, row0, stride, m, n, out);
    case 2: return DotF32Rows16Held<2>(q, row0, stride, m, n, out);
    case 3: return DotF32Rows16Held<3>(q, row0, stride, m, n, out);
    case 4: return DotF32Rows16Held<4>(q, row0, stride, m, n, out);
    case 5: return DotF32Rows16Held<5>(q, row0, stride, m, n, out);
    case 6: return DotF32Rows16Held<6>(q, row0, stride, m, n, out);
    case 7: return DotF32Rows16Held<7>(q, row0, stride, m, n, out);
    case 8: return DotF32Rows16Held<8>(q, row0, stride, m, n, out);
    default: {
      const float* rows[4];
      int k = 0;
      for (; k + 4 <= m; k += 4) {
        for (int r = 0; r < 4; ++r) rows[r] = row0 + (k + r) * stride;
        DotF32Rows<4>(q, rows, n, out + k);
      }
      for (; k < m; ++k) {
        rows[0] = row0 + k * stride;
        DotF32Rows<1>(q, rows, n, out + k);
      }
    }
  }
}
#endif

}  // namespace gguflow::kernels
