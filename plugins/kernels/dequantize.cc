// dequantize_row: one row of any weight type decoded to f32, for embedding lookups. Uses the
// same scalar unpacking as the portable dot paths and GGML's to_float arithmetic order:
//   Q4_0/Q5_0/Q8_0: q * d      Q4_1/Q5_1: q * d + m
//   k-quants: (d * sc) * (q - offset) - (dmin * min)   (no min term for Q3_K/Q6_K)
#include "plugins/kernels/kernels_internal.h"

namespace gguflow::kernels {
namespace {

template <class Block>
void DequantizeBlock32(uint32_t type, const Block* blocks, float* dst, int64_t n) {
  int8_t q[32];
  for (int64_t b = 0; b < n / 32; ++b) {
    UnpackBlock32(type, &blocks[b], q);
    const float d = gguflow_fp16_to_f32(blocks[b].d);
    for (int j = 0; j < 32; ++j) dst[32 * b + j] = static_cast<float>(q[j]) * d;
  }
}

template <class Block>
void DequantizeBlock32WithMin(uint32_t type, const Block* blocks, float* dst, int64_t n) {
  int8_t q[32];
  for (int64_t b = 0; b < n / 32; ++b) {
    UnpackBlock32(type, &blocks[b], q);
    const float d = gguflow_fp16_to_f32(blocks[b].d);
    const float m = gguflow_fp16_to_f32(blocks[b].m);
    for (int j = 0; j < 32; ++j) dst[32 * b + j] = static_cast<float>(q[j]) * d + m;
  }
}

void DequantizeKQuant(uint32_t type, const void* src, size_t block_bytes, float* dst, int64_t n) {
  uint8_t q[256];
  const int offset = KQuantOffset(type);
  const bool has_min = KQuantHasMin(type);
  for (int64_t b = 0; b < n / 256; ++b) {
    const void* block = static_cast<const char*>(src) + b * block_bytes;
    KScales s;
    PrepareKScales(type, block, &s);
    UnpackKQuant(type, block, q);
    for (int j = 0; j < 16; ++j) {
      const float dl = s.d * static_cast<float>(s.sc[j]);
      const float ml = s.dmin * static_cast<float>(s.coef[j]);
      float* out = dst + 256 * b + 16 * j;
      const uint8_t* qj = q + 16 * j;
      if (has_min) {
        for (int l = 0; l < 16; ++l) out[l] = dl * static_cast<float>(qj[l]) - ml;
      } else {
        for (int l = 0; l < 16; ++l) out[l] = dl * static_cast<float>(qj[l] - offset);
      }
    }
  }
}

}  // namespace

void DequantizeRow(uint32_t type, const void* src, float* dst, int64_t n) {
  switch (type) {
    case GGML_TYPE_F32:
      for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<const float*>(src)[i];
      break;
    case GGML_TYPE_F16:
      for (int64_t i = 0; i < n; ++i) dst[i] = gguflow_fp16_to_f32(static_cast<const uint16_t*>(src)[i]);
      break;
    case GGML_TYPE_BF16:
      for (int64_t i = 0; i < n; ++i) dst[i] = gguflow_bf16_to_f32(static_cast<const uint16_t*>(src)[i]);
      break;
    case GGML_TYPE_Q4_0: DequantizeBlock32(type, static_cast<const block_q4_0*>(src), dst, n); break;
    case GGML_TYPE_Q5_0: DequantizeBlock32(type, static_cast<const block_q5_0*>(src), dst, n); break;
    case GGML_TYPE_Q8_0: DequantizeBlock32(type, static_cast<const block_q8_0*>(src), dst, n); break;
    case GGML_TYPE_Q4_1: DequantizeBlock32WithMin(type, static_cast<const block_q4_1*>(src), dst, n); break;
    case GGML_TYPE_Q5_1: DequantizeBlock32WithMin(type, static_cast<const block_q5_1*>(src), dst, n); break;
    case GGML_TYPE_Q2_K: DequantizeKQuant(type, src, sizeof(block_q2_K), dst, n); break;
    case GGML_TYPE_Q3_K: DequantizeKQuant(type, src, sizeof(block_q3_K), dst, n); break;
    case GGML_TYPE_Q4_K: DequantizeKQuant(type, src, sizeof(block_q4_K), dst, n); break;
    case GGML_TYPE_Q5_K: DequantizeKQuant(type, src, sizeof(block_q5_K), dst, n); break;
    case GGML_TYPE_Q6_K: DequantizeKQuant(type, src, sizeof(block_q6_K), dst, n); break;
    default: break;  // the host only passes types listed in act_type
  }
}

}  // namespace gguflow::kernels
