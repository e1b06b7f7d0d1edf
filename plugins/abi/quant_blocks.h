/* GGML block layouts and scalar float conversions, shared by the reference quantizers
 * (runtime/quant) and the kernel plugins.
 *
 * Plain C11 (also valid C++20), header-only, no dependencies beyond <stdint.h>/<string.h>.
 * Every struct is packed exactly as in GGML's ggml-common.h: naturally aligned members with no
 * padding, so an array of blocks is the byte image of a GGUF tensor row. The sizes are
 * checked below against the literal sizes in plugins/abi/ggml_type.c (tests/quant compares
 * the two tables at run time too).
 *
 * Conventions used in the comments: a row of n elements is n / QK blocks; "element j" is the
 * j-th value of the block in row order. */
#ifndef GGUFLOW_QUANT_BLOCKS_H
#define GGUFLOW_QUANT_BLOCKS_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
#define GGUFLOW_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
extern "C" {
#else
#define GGUFLOW_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

/* IEEE binary16 and bfloat16 values, stored as their bit patterns. */
typedef uint16_t gguflow_fp16_t;
typedef uint16_t gguflow_bf16_t;

#define GGUFLOW_QK4_0 32
#define GGUFLOW_QK4_1 32
#define GGUFLOW_QK5_0 32
#define GGUFLOW_QK5_1 32
#define GGUFLOW_QK8_0 32
#define GGUFLOW_QK8_1 32
#define GGUFLOW_QK_K 256
#define GGUFLOW_K_SCALE_SIZE 12 /* bytes of packed 6-bit scales and mins in Q4_K / Q5_K */

/* ---- 32-element blocks ------------------------------------------------------------------ */

/* Q4_0: value = d * (q - 8). Element j < 16 is the low nibble of qs[j], j + 16 the high. */
typedef struct {
  gguflow_fp16_t d;
  uint8_t qs[GGUFLOW_QK4_0 / 2];
} block_q4_0;

/* Q4_1: value = d * q + m. Nibbles as Q4_0. */
typedef struct {
  gguflow_fp16_t d;
  gguflow_fp16_t m;
  uint8_t qs[GGUFLOW_QK4_1 / 2];
} block_q4_1;

/* Q5_0: value = d * (q - 16); bit j of the little-endian u32 `qh` is the 5th bit of element j. */
typedef struct {
  gguflow_fp16_t d;
  uint8_t qh[4];
  uint8_t qs[GGUFLOW_QK5_0 / 2];
} block_q5_0;

/* Q5_1: value = d * q + m; qh and nibbles as Q5_0. */
typedef struct {
  gguflow_fp16_t d;
  gguflow_fp16_t m;
  uint8_t qh[4];
  uint8_t qs[GGUFLOW_QK5_1 / 2];
} block_q5_1;

/* Q8_0: value = d * q. */
typedef struct {
  gguflow_fp16_t d;
  int8_t qs[GGUFLOW_QK8_0];
} block_q8_0;

/* Q8_1 (activations of Q4_1/Q5_1 dot products): value = d * q; s = d * sum(qs). */
typedef struct {
  gguflow_fp16_t d;
  gguflow_fp16_t s;
  int8_t qs[GGUFLOW_QK8_1];
} block_q8_1;

/* ---- 256-element super-blocks (k-quants) ----------------------------------------------- */

/* Q2_K: 16 sub-blocks of 16. scales[i]: low nibble = scale, high nibble = min of sub-block i.
 * value = d * scale * q - dmin * min, q in 0..3. */
typedef struct {
  uint8_t scales[GGUFLOW_QK_K / 16];
  uint8_t qs[GGUFLOW_QK_K / 4];
  gguflow_fp16_t d;
  gguflow_fp16_t dmin;
} block_q2_K;

/* Q3_K: 16 sub-blocks of 16 with 6-bit signed scales (stored + 32) packed into 12 bytes;
 * 2 low bits in qs, the high bit in hmask (set = no -4 offset). value = d * (scale-32) * q. */
typedef struct {
  uint8_t hmask[GGUFLOW_QK_K / 8];
  uint8_t qs[GGUFLOW_QK_K / 4];
  uint8_t scales[12];
  gguflow_fp16_t d;
} block_q3_K;

/* Q4_K: 8 sub-blocks of 32 with 6-bit scales and mins packed into 12 bytes.
 * value = d * scale * q - dmin * min, q in 0..15. */
typedef struct {
  gguflow_fp16_t d;
  gguflow_fp16_t dmin;
  uint8_t scales[GGUFLOW_K_SCALE_SIZE];
  uint8_t qs[GGUFLOW_QK_K / 2];
} block_q4_K;

/* Q5_K: as Q4_K with a 5th bit per element in qh. q in 0..31. */
typedef struct {
  gguflow_fp16_t d;
  gguflow_fp16_t dmin;
  uint8_t scales[GGUFLOW_K_SCALE_SIZE];
  uint8_t qh[GGUFLOW_QK_K / 8];
  uint8_t qs[GGUFLOW_QK_K / 2];
} block_q5_K;

/* Q6_K: 16 sub-blocks of 16 with int8 scales; 4 low bits in ql, 2 high bits in qh.
 * value = d * scale * (q - 32). */
typedef struct {
  uint8_t ql[GGUFLOW_QK_K / 2];
  uint8_t qh[GGUFLOW_QK_K / 4];
  int8_t scales[GGUFLOW_QK_K / 16];
  gguflow_fp16_t d;
} block_q6_K;

/* Q8_K (activations of k-quant dot products): value = d * q with an f32 d; bsums[i] is the
 * sum of qs[16 i .. 16 i + 15]. */
typedef struct {
  float d;
  int8_t qs[GGUFLOW_QK_K];
  int16_t bsums[GGUFLOW_QK_K / 16];
} block_q8_K;

/* Sizes as in plugins/abi/ggml_type.c (type_size of each GGML type). */
GGUFLOW_STATIC_ASSERT(sizeof(block_q4_0) == 18, "block_q4_0 must be 18 bytes");
GGUFLOW_STATIC_ASSERT(sizeof(block_q4_1) == 20, "block_q4_1 must be 20 bytes");
GGUFLOW_STATIC_ASSERT(sizeof(block_q5_0) == 22, "block_q5_0 must be 22 bytes");
GGUFLOW_STATIC_ASSERT(sizeof(block_q5_1) == 24, "block_q5_1 must be 24 bytes");
GGUFLOW_STATIC_ASSERT(sizeof(block_q8_0) == 34, "block_q8_0 must be 34 bytes");
GGUFLOW_STATIC_ASSERT(sizeof(block_q8_1) == 36, "block_q8_1 must be 36 bytes");
GGUFLOW_STATIC_ASSERT(sizeof(block_q2_K) == 84, "block_q2_K must be 84 bytes");
GGUFLOW_STATIC_ASSERT(sizeof(block_q3_K) == 110, "block_q3_K must be 110 bytes");
GGUFLOW_STATIC_ASSERT(sizeof(block_q4_K) == 144, "block_q4_K must be 144 bytes");
GGUFLOW_STATIC_ASSERT(sizeof(block_q5_K) == 176, "block_q5_K must be 176 bytes");
GGUFLOW_STATIC_ASSERT(sizeof(block_q6_K) == 210, "block_q6_K must be 210 bytes");
GGUFLOW_STATIC_ASSERT(sizeof(block_q8_K) == 292, "block_q8_K must be 292 bytes");

/* ---- scalar float conversions ------------------------------------------------------------
 * Bit-exact with GGML's: binary16 conversions are the IEEE ones (round to nearest even,
 * subnormals kept, NaN stays NaN), computed with the integer/float tricks of the FP16 library
 * that GGML uses when F16C is absent (and F16C gives the same bits). bfloat16 is the upper
 * half of the f32 rounded to nearest even; NaN is kept quiet. These need IEEE float semantics:
 * do not compile them with -ffast-math. */

static inline float gguflow_f32_from_bits(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static inline uint32_t gguflow_f32_to_bits(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  return bits;
}

static inline float gguflow_fp16_to_f32(gguflow_fp16_t h) {
  const uint32_t w = (uint32_t)h << 16;
  const uint32_t sign = w & UINT32_C(0x80000000);
  const uint32_t two_w = w + w;

  /* Normal (and inf/NaN): shift exponent+mantissa into f32 position, rebias by scaling. */
  const uint32_t exp_offset = UINT32_C(0xE0) << 23;
  const float exp_scale = 0x1.0p-112f;
  const float normalized = gguflow_f32_from_bits((two_w >> 4) + exp_offset) * exp_scale;

  /* Subnormal: place the mantissa under a 0.5 exponent and subtract 0.5. */
  const uint32_t magic_mask = UINT32_C(126) << 23;
  const float magic_bias = 0.5f;
  const float denormalized = gguflow_f32_from_bits((two_w >> 17) | magic_mask) - magic_bias;

  const uint32_t denormalized_cutoff = UINT32_C(1) << 27;
  const uint32_t result = sign | (two_w < denormalized_cutoff ? gguflow_f32_to_bits(denormalized)
                                                              : gguflow_f32_to_bits(normalized));
  return gguflow_f32_from_bits(result);
}

static inline gguflow_fp16_t gguflow_f32_to_fp16(float f) {
  /* Scaling up then down makes the FPU do the rounding to 11 significant bits. */
  const float scale_to_inf = 0x1.0p+112f;
  const float scale_to_zero = 0x1.0p-110f;
  const float abs_f = gguflow_f32_from_bits(gguflow_f32_to_bits(f) & UINT32_C(0x7FFFFFFF));
  float base = (abs_f * scale_to_inf) * scale_to_zero;

  const uint32_t w = gguflow_f32_to_bits(f);
  const uint32_t shl1_w = w + w;
  const uint32_t sign = w & UINT32_C(0x80000000);
  uint32_t bias = shl1_w & UINT32_C(0xFF000000);
  if (bias < UINT32_C(0x71000000)) bias = UINT32_C(0x71000000);

  base = gguflow_f32_from_bits((bias >> 1) + UINT32_C(0x07800000)) + base;
  const uint32_t bits = gguflow_f32_to_bits(base);
  const uint32_t exp_bits = (bits >> 13) & UINT32_C(0x00007C00);
  const uint32_t mantissa_bits = bits & UINT32_C(0x00000FFF);
  const uint32_t nonsign = exp_bits + mantissa_bits;
  return (gguflow_fp16_t)((sign >> 16) | (shl1_w > UINT32_C(0xFF000000) ? UINT32_C(0x7E00) : nonsign));
}

static inline float gguflow_bf16_to_f32(gguflow_bf16_t h) {
  return gguflow_f32_from_bits((uint32_t)h << 16);
}

static inline gguflow_bf16_t gguflow_f32_to_bf16(float f) {
  const uint32_t bits = gguflow_f32_to_bits(f);
  if ((bits & UINT32_C(0x7FFFFFFF)) > UINT32_C(0x7F800000)) {
    return (gguflow_bf16_t)((bits >> 16) | 64); /* NaN: keep the payload's top, force quiet */
  }
  return (gguflow_bf16_t)((bits + (UINT32_C(0x7FFF) + ((bits >> 16) & 1))) >> 16);
}

#ifdef __cplusplus
}
#endif

#undef GGUFLOW_STATIC_ASSERT

#endif /* GGUFLOW_QUANT_BLOCKS_H */
