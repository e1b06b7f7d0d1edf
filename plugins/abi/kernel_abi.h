/* The kernel ABI: the only interface between the gguflow host and a kernel plugin.
 *
 * Plain C. A plugin exports one function, `gguflow_kernels_get`, returning a pointer to a static
 * table of function pointers. The host checks `abi_version` and `table_bytes` before using any
 * entry. Nothing in a plugin allocates, starts threads, throws or keeps state between calls:
 * the host splits work across threads by passing row ranges.
 *
 * Conventions
 *  - A weight matrix W of GGML type `w_type` has `n_rows` rows of `n` elements; row r starts at
 *    `(const char*)w + r * w_row_bytes`. y = W x means y[r] = dot(row r, x).
 *  - Activations are multiplied in the format `act_type[w_type]` (GGML's `vec_dot_type`):
 *    Q8_0 for Q4_0/Q5_0/Q8_0, Q8_1 for Q4_1/Q5_1, Q8_K for the k-quants, F16 for F16, BF16 for
 *    BF16, F32 for F32. The host quantizes each activation row once with `quantize_act` and
 *    reuses it for every weight row, which is what makes integer dot products possible.
 *  - Every output element is computed by one fixed sequence of operations that does not depend
 *    on the row range it was computed in, so results do not depend on the thread split.
 */
#ifndef GGUFLOW_KERNEL_ABI_H
#define GGUFLOW_KERNEL_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "plugins/abi/ggml_type.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 2: row-interleaved (packed) weight layouts: pack_rows, pack, mat_vec_packed, mat_mat_packed,
 * dequantize_row_packed. */
/* 3: gelu_tanh_f32. */
/* 4: KV cache rows stored as F16, Q8_0 or Q4_0: kv_store_row, kv_dot, kv_axpy. */
/* 5: blocked prompt attention: kv_dot_rows, kv_axpy_rows. */
#define GGUFLOW_KERNEL_ABI_VERSION 5u

/* Name of the exported entry point. */
#define GGUFLOW_KERNELS_ENTRY "gguflow_kernels_get"

typedef struct GguflowKernels {
  uint32_t abi_version; /* GGUFLOW_KERNEL_ABI_VERSION the plugin was built with */
  uint32_t table_bytes; /* sizeof(GguflowKernels) as the plugin was compiled */
  const char* target_name; /* hwy::TargetName(HWY_TARGET), e.g. "AVX2" */
  int64_t hwy_target;      /* HWY_TARGET bit of the build */

  /* act_type[w] is the activation format weights of type w multiply with, or GGML_TYPE_COUNT
   * when this plugin has no kernel for w. */
  uint32_t act_type[GGML_TYPE_COUNT];

  /* dst = x[0..n) encoded as `act_type` (F32, F16, BF16, Q8_0, Q8_1 or Q8_K); n is a multiple
   * of that type's block size. Bit-exact with GGML's reference quantizer. */
  void (*quantize_act)(uint32_t act_type, const float* x, void* dst, int64_t n);

  /* Decode: y[r] = dot(W row r, act) for r in [row_begin, row_end); `act` is one row in
   * act_type[w_type] of n elements. y is indexed by absolute row (y[row_begin] first). */
  void (*mat_vec)(uint32_t w_type, const void* w, size_t w_row_bytes, int64_t n,
                  int64_t row_begin, int64_t row_end, const void* act, float* y);

  /* Prefill: y[a * y_stride + r] = dot(W row r, act row a) for r in [row_begin, row_end) and
   * a in [0, n_act); act rows are `act_row_bytes` apart. Same values as n_act mat_vec calls.
   * Every activation row (here and in mat_vec) starts at a multiple of its blocks' natural
   * alignment: 4 bytes for Q8_K (its d is a float) and F32, 2 for the others. */
  void (*mat_mat)(uint32_t w_type, const void* w, size_t w_row_bytes, int64_t n,
                  int64_t row_begin, int64_t row_end, const void* act, size_t act_row_bytes,
                  int64_t n_act, float* y, int64_t y_stride);

  /* dst[0..n) = decoded row of any weight type listed in act_type (embedding lookups). */
  void (*dequantize_row)(uint32_t type, const void* src, float* dst, int64_t n);

  /* f32 vector primitives used by ops. */
  float (*dot_f32)(const float* a, const float* b, int64_t n);
  void (*axpy_f32)(float a, const float* x, float* y, int64_t n);     /* y += a * x */
  void (*scale_f32)(float a, float* x, int64_t n);                    /* x *= a */
  void (*add_f32)(const float* a, const float* b, float* y, int64_t n); /* y = a + b */
  void (*mul_f32)(const float* a, const float* b, float* y, int64_t n); /* y = a * b */
  /* y = x / sqrt(mean(x^2) + eps) * w (w may be NULL for no gain). */
  void (*rmsnorm_f32)(const float* x, const float* w, float* y, int64_t n, float eps);
  /* x = softmax(x) in place; returns sum of exp(x - max(x)) before normalisation. */
  float (*softmax_f32)(float* x, int64_t n);
  /* Rotates pairs of x[0..n_rot) of one head by the angles whose cos/sin are given
   * (cos_sin[2i], cos_sin[2i+1] for pair i). neox != 0 pairs (i, i + n_rot/2), else (2i, 2i+1). */
  void (*rope_f32)(float* x, int64_t n_rot, const float* cos_sin, int neox);
  /* y = silu(gate) * up, silu(g) = g / (1 + exp(-g)). */
  void (*silu_mul_f32)(const float* gate, const float* up, float* y, int64_t n);

  /* Packed weights (optional, ABI 2). Some formats multiply faster when groups of rows are
   * interleaved block by block, because one pass then feeds several independent accumulators
   * and shares the activation block and the unpacking constants. pack_rows[w] is the group size
   * of this plugin's packed layout for weight type w, or 0 when it has none (then the three
   * entries below are never called with w).
   *  - pack: dst = the packed layout of the n_rows x n matrix src (rows w_row_bytes apart).
   *    n_rows is a multiple of pack_rows[w_type]; dst holds n_rows * w_row_bytes bytes, the
   *    same size as src, and does not overlap it.
   *  - mat_vec_packed / mat_mat_packed: the arguments of mat_vec / mat_mat, with w the packed
   *    matrix (w_row_bytes still the row-major row size), and their results to float rounding
   *    (the same exact integer block dots, accumulated in another order). A row's bits depend
   *    only on the row and the activation row: not on the row range, and mat_mat_packed equals
   *    n_act mat_vec_packed calls. Row ranges may start and end anywhere; ranges of whole
   *    groups are the fast case.
   *  - dequantize_row_packed: dst[0..n) = row `row` of the packed matrix w, the same values as
   *    dequantize_row of that row in the row-major matrix (embedding lookups in a table that is
   *    also a packed matmul weight, e.g. a tied lm-head). */
  uint32_t pack_rows[GGML_TYPE_COUNT];
  void (*pack)(uint32_t w_type, const void* src, size_t w_row_bytes, int64_t n, int64_t n_rows,
               void* dst);
  void (*mat_vec_packed)(uint32_t w_type, const void* w, size_t w_row_bytes, int64_t n,
                         int64_t row_begin, int64_t row_end, const void* act, float* y);
  void (*mat_mat_packed)(uint32_t w_type, const void* w, size_t w_row_bytes, int64_t n,
                         int64_t row_begin, int64_t row_end, const void* act,
                         size_t act_row_bytes, int64_t n_act, float* y, int64_t y_stride);
  void (*dequantize_row_packed)(uint32_t w_type, const void* w, size_t w_row_bytes, int64_t n,
                                int64_t row, float* dst);

  /* ABI 3. y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the tanh GELU (bert's FFN,
   * gemma's GeGLU); y may be x. A vector tanh: libm's scalar tanhf was a quarter of an
   * encoder's time. */
  void (*gelu_tanh_f32)(const float* x, float* y, int64_t n);

  /* ABI 4. KV cache rows in a compact element type `kv_type`: GGML_TYPE_F32, GGML_TYPE_F16,
   * GGML_TYPE_Q8_0 or GGML_TYPE_Q4_0 (the host passes no other). A row of `width` elements is
   * stored as width / block elements blocks (width a multiple of 32 for the quantized types),
   * one after the other; attention reads q8_0 / q4_0 rows in place, a block at a time, never a
   * decoded copy of the cache (a prompt copies one KV head's f32 / f16 rows next to each other,
   * f16 widened by dequantize_row, and reads the copy with the F32 entries).
   *  - kv_store_row: dst = x[0..width) in kv_type. F16 rounds to nearest even; Q8_0 is
   *    bit-exact with GGML's quantize_row_q8_0_ref (d = max|x| / 127, q = roundf(x / d));
   *    Q4_0 with quantize_row_q4_0_ref (d = max / -8 of the element of largest magnitude,
   *    q = min(15, (int8)(x / d + 8.5))).
   *  - kv_dot: returns sum_i q[i] * row[offset + i] for i in [0, n), row decoded; elements
   *    [offset, offset + n) may start and end inside a block (a head narrower than a block).
   *  - kv_axpy: y[i] += a * row[offset + i] for i in [0, n), row decoded.
   * Results equal the scalar plugin's to float rounding (the order of the additions differs
   * by vector width); the f32 path of attention keeps using dot_f32 / axpy_f32. F16 must give
   * exactly the F32 results on the rows widened to f32 (kv_dot(F16) = kv_dot(F32) of the
   * widened row, likewise kv_axpy and the _rows entries), so that a prompt over the widened
   * copy and a decode step over the cache agree bit for bit. */
  void (*kv_store_row)(uint32_t kv_type, const float* x, void* dst, int64_t width);
  float (*kv_dot)(uint32_t kv_type, const float* q, const void* row, int64_t offset, int64_t n);
  void (*kv_axpy)(uint32_t kv_type, float a, const void* row, int64_t offset, float* y, int64_t n);

  /* ABI 5. Blocked attention: n_q queries of one KV head against a run of n_rows cache rows
   * (row j at (const char*)rows + j * row_bytes, its elements [offset, offset + n) in kv_type,
   * F32 included), so a prompt reads each row once per block of queries, not once per query.
   *  - kv_dot_rows: s[i * s_stride + j] = kv_dot(kv_type, q + i * q_stride, row j, offset, n)
   *    for i in [0, n_q), j in [0, n_rows).
   *  - kv_axpy_rows: for each i in [0, n_q): n_rows calls kv_axpy(kv_type,
   *    a[i * a_stride + j], row j, offset, y + i * y_stride, n) for j = 0, 1, ... in order.
   * Bit-identical to those kv_dot / kv_axpy calls (every result goes through the same
   * operations in the same order; only the loops around them differ), so attention gives the
   * same bits however its queries are blocked: a prompt in one step, in chunks, or decoded. */
  void (*kv_dot_rows)(uint32_t kv_type, const float* q, int64_t q_stride, int64_t n_q,
                      const void* rows, size_t row_bytes, int64_t n_rows, int64_t offset,
                      int64_t n, float* s, int64_t s_stride);
  void (*kv_axpy_rows)(uint32_t kv_type, const float* a, int64_t a_stride, int64_t n_q,
                       const void* rows, size_t row_bytes, int64_t n_rows, int64_t offset,
                       float* y, int64_t y_stride, int64_t n);
} GguflowKernels;

typedef const GguflowKernels* (*GguflowKernelsGetFn)(void);

#ifdef __cplusplus
}
#endif

#endif /* GGUFLOW_KERNEL_ABI_H */
