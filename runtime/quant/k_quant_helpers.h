// Shared search routines of GGML's k-quant reference quantizers (ggml-quants.c): they pick a
// sub-block scale (and min) by trying a few candidate scales and keeping the one with the
// smallest (weighted) error. Reproduced operation by operation for bit-exact output.
#pragma once

#include <cstdint>
#include <cstring>

#include "plugins/abi/quant_blocks.h"

namespace gguflow::quant {

// Below this, a group's max |x| counts as all-zero (GGML's GROUP_MAX_EPS).
inline constexpr float kGroupMaxEps = 1e-15f;

// Round to nearest, ties to even, for |fval| <= 2^22 - 1: adding 1.5 * 2^23 makes the FPU
// round into the low mantissa bits (GGML's nearest_int).
inline int nearest_int(float fval) {
  float val = fval + 12582912.f;
  int i;
  std::memcpy(&i, &val, sizeof(int));
  return (i & 0x007fffff) - 0x00400000;
}

// Symmetric quantization of x[0..n) to levels L in [0, 2*nmax), stored as l + nmax, with the
// returned scale such that x ~= scale * (L - nmax). rmse_type 0: plain; 1: weighted by x^2
// (or `quant_weights` when non-null) with a search over 18 nearby scales; < 0: one refinement
// step and an early return.
float make_qx_quants(int n, int nmax, const float* x, int8_t* L, int rmse_type,
                     const float* quant_weights);

// Symmetric 3-bit variant used by Q3_K: iterative per-element refinement when `do_rmse`.
float make_q3_quants(int n, int nmax, const float* x, int8_t* L, bool do_rmse);

// Asymmetric quantization x ~= scale * L - the_min, L in [0, nmax], weighted by `weights`;
// searches nstep+1 scales (rmin + rdelta * is + nmax) / (max - min). `Laux` is scratch of n.
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                       float* the_min, uint8_t* Laux, float rmin, float rdelta, int nstep,
                       bool use_mad);

// Unpacks the j-th (0..7) 6-bit scale and min of a Q4_K / Q5_K `scales[12]` array.
inline void get_scale_min_k4(int j, const uint8_t* q, uint8_t* d, uint8_t* m) {
  if (j < 4) {
    *d = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *d = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    *m = (q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4);
  }
}

// Packs 8 6-bit scales and mins into a Q4_K / Q5_K `scales[12]` array (inverse of the above).
inline void set_scale_min_k4(int j, uint8_t ls, uint8_t lm, uint8_t* q) {
  if (j < 4) {
    q[j] = ls;
    q[j + 4] = lm;
  } else {
    q[j + 4] = (ls & 0xF) | ((lm & 0xF) << 4);
    q[j - 4] |= ((ls >> 4) << 6);
    q[j - 0] |= ((lm >> 4) << 6);
  }
}


// The part of Q4_K and Q5_K quantization they share (GGML's quantize_row_q{4,5}_K_ref): for each
// of the 8 sub-blocks of 32 values of x[0..256), a scale and min from make_qkx2_quants over levels
// [0, n_max] (weights rms(x) + |x|, `n_step` candidate scales from `rmin`); scales and mins packed
// as 6-bit values into `scales` under the super-block `d` and `dmin`; then each value's level
// under the packed (rounded) scales into L[0..256).
void quantize_k4_scales_and_levels(const float* x, int n_max, float rmin, int n_step,
                                   uint8_t scales[12], gguflow_fp16_t* d, gguflow_fp16_t* dmin,
                                   uint8_t L[256]);

}  // namespace gguflow::quant
