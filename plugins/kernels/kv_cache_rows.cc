// KV cache rows in a compact element type (ABI 4): storing a row as F16 / Q8_0 / Q4_0, and the
// two reads attention makes of a stored row without decoding the cache: q . k over one head's
// elements, and y += a * v.
//
// A head's elements [offset, offset + n) of a row are read block by block. The fast path (the
// head starts on a block boundary and covers whole blocks: head_dim 64 or 128) multiplies each
// 32-element block in vectors: q8_0 and q4_0 integers are widened to f32 lanes, multiplied
// with q (or scaled by a * d and added to y), and the block's sum is scaled by its d. A head
// narrower than a block, or one that starts inside a block (stories260K: head_dim 8), decodes
// one block at a time into 32 floats and uses the overlap. Nothing is allocated.
#include <cmath>
#include <cstring>

#include "plugins/kernels/kernels_internal.h"

namespace gguflow::kernels {
namespace {

namespace hn = hwy::HWY_NAMESPACE;
using DF = hn::ScalableTag<float>;
constexpr int64_t kBlock = 32;

// GGML's quantize_row_q4_0_ref: the element of largest magnitude (sign included) maps to -8,
// d = max / -8, q = min(15, (int8)(x / d + 8.5)) (truncation toward zero, as GGML).
void QuantizeQ4_0(const float* x, block_q4_0* y, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b, x += kBlock) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < kBlock; ++j) {
      if (std::fabs(x[j]) > amax) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    const float d = max / -8;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = gguflow_f32_to_fp16(d);
    for (int j = 0; j < kBlock / 2; ++j) {
      const uint8_t lo = static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>(x[j] * id + 8.5f))));
      const uint8_t hi = static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>(x[j + 16] * id + 8.5f))));
      y[b].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

// The 32 decoded values of block `b` of a quantized row.
void DecodeBlock(uint32_t type, const void* row, int64_t b, float out[kBlock]) {
  if (type == GGML_TYPE_Q8_0) {
    const block_q8_0& blk = static_cast<const block_q8_0*>(row)[b];
    const float d = HalfToFloat(blk.d);
    for (int j = 0; j < kBlock; ++j) out[j] = d * static_cast<float>(blk.qs[j]);
  } else {
    const block_q4_0& blk = static_cast<const block_q4_0*>(row)[b];
    const float d = HalfToFloat(blk.d);
    for (int j = 0; j < kBlock / 2; ++j) {
      out[j] = d * static_cast<float>((blk.qs[j] & 0x0F) - 8);
      out[j + 16] = d * static_cast<float>((blk.qs[j] >> 4) - 8);
    }
  }
}

// The block's 32 values as f32 vectors, lanes at a time: calls f(j, values of j..j+lanes) with
// the block's integers (q8_0: q; q4_0: q - 8) widened to f32, not yet scaled by d.
template <class F>
inline void ForEachBlockVector(uint32_t type, const void* row, int64_t b, F&& f) {
  const DF df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  if (type == GGML_TYPE_Q8_0) {
    const hn::Rebind<int32_t, DF> di;
    const hn::Rebind<int8_t, DF> d8;
    const int8_t* qs = static_cast<const block_q8_0*>(row)[b].qs;
    for (int64_t j = 0; j < kBlock; j += lanes) f(j, hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(d8, qs + j))));
  } else {
    const hn::Rebind<int32_t, DF> di;
    const hn::Rebind<uint8_t, DF> du8;
    const uint8_t* qs = static_cast<const block_q4_0*>(row)[b].qs;
    const auto low_mask = hn::Set(di, 0x0F), eight = hn::Set(di, 8);
    // lanes <= 16 on every target, so the 16 bytes are whole vectors of lanes.
    for (int64_t j = 0; j < kBlock / 2; j += lanes) {
      const auto bytes = hn::BitCast(di, hn::PromoteTo(hn::Rebind<uint32_t, DF>(), hn::LoadU(du8, qs + j)));
      f(j, hn::ConvertTo(df, hn::Sub(hn::And(bytes, low_mask), eight)));
      f(j + 16, hn::ConvertTo(df, hn::Sub(hn::ShiftRight<4>(bytes), eight)));
    }
  }
}

float BlockScale(uint32_t type, const void* row, int64_t b) {
  return type == GGML_TYPE_Q8_0 ? HalfToFloat(static_cast<const block_q8_0*>(row)[b].d)
                                : HalfToFloat(static_cast<const block_q4_0*>(row)[b].d);
}

float DotF16(const float* q, const gguflow_fp16_t* k, int64_t n) {
  const DF df;
  const hn::Rebind<hwy::float16_t, DF> dh;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  auto acc = hn::Zero(df);
  int64_t i = 0;
  const auto* kh = reinterpret_cast<const hwy::float16_t*>(k);
  for (; i + lanes <= n; i += lanes) acc = hn::MulAdd(hn::LoadU(df, q + i), hn::PromoteTo(df, hn::LoadU(dh, kh + i)), acc);
  float sum = hn::GetLane(hn::SumOfLanes(df, acc));
  for (; i < n; ++i) sum += q[i] * HalfToFloat(k[i]);
  return sum;
}

void AxpyF16(float a, const gguflow_fp16_t* v, float* y, int64_t n) {
  const DF df;
  const hn::Rebind<hwy::float16_t, DF> dh;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const auto va = hn::Set(df, a);
  const auto* vh = reinterpret_cast<const hwy::float16_t*>(v);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes)
    hn::StoreU(hn::MulAdd(va, hn::PromoteTo(df, hn::LoadU(dh, vh + i)), hn::LoadU(df, y + i)), df, y + i);
  for (; i < n; ++i) y[i] += a * HalfToFloat(v[i]);
}

// Quantized q . row[offset, offset + n).
float DotBlocks(uint32_t type, const float* q, const void* row, int64_t offset, int64_t n) {
  if (offset % kBlock == 0 && n % kBlock == 0) {
    const DF df;
    auto total = hn::Zero(df);
    for (int64_t b = offset / kBlock; b < (offset + n) / kBlock; ++b) {
      const float* qb = q + b * kBlock - offset;
      auto acc = hn::Zero(df);
      ForEachBlockVector(type, row, b, [&](int64_t j, auto v) { acc = hn::MulAdd(hn::LoadU(df, qb + j), v, acc); });
      total = hn::MulAdd(hn::Set(df, BlockScale(type, row, b)), acc, total);
    }
    return hn::GetLane(hn::SumOfLanes(df, total));
  }
  float sum = 0.0f, values[kBlock];
  for (int64_t e = offset; e < offset + n;) {
    const int64_t b = e / kBlock, end = std::min(offset + n, (b + 1) * kBlock);
    DecodeBlock(type, row, b, values);
    for (int64_t i = e; i < end; ++i) sum += q[i - offset] * values[i - b * kBlock];
    e = end;
  }
  return sum;
}

// Quantized y += a * row[offset, offset + n).
void AxpyBlocks(uint32_t type, float a, const void* row, int64_t offset, float* y, int64_t n) {
  if (offset % kBlock == 0 && n % kBlock == 0) {
    const DF df;
    for (int64_t b = offset / kBlock; b < (offset + n) / kBlock; ++b) {
      float* yb = y + b * kBlock - offset;
      const auto ad = hn::Set(df, a * BlockScale(type, row, b));
      ForEachBlockVector(type, row, b, [&](int64_t j, auto v) {
        hn::StoreU(hn::MulAdd(ad, v, hn::LoadU(df, yb + j)), df, yb + j);
      });
    }
    return;
  }
  float values[kBlock];
  for (int64_t e = offset; e < offset + n;) {
    const int64_t b = e / kBlock, end = std::min(offset + n, (b + 1) * kBlock);
    DecodeBlock(type, row, b, values);
    for (int64_t i = e; i < end; ++i) y[i - offset] += a * values[i - b * kBlock];
    e = end;
  }
}

}  // namespace

void KvStoreRow(uint32_t kv_type, const float* x, void* dst, int64_t width) {
  if (kv_type == GGML_TYPE_Q4_0) QuantizeQ4_0(x, static_cast<block_q4_0*>(dst), width);
  else QuantizeActivations(kv_type, x, dst, width);  // F32 copy, F16, Q8_0 (GGML's bits)
}

float KvDot(uint32_t kv_type, const float* q, const void* row, int64_t offset, int64_t n) {
  switch (kv_type) {
    case GGML_TYPE_F32: return DotF32(q, static_cast<const float*>(row) + offset, n);
    case GGML_TYPE_F16: return DotF16(q, static_cast<const gguflow_fp16_t*>(row) + offset, n);
    default: return DotBlocks(kv_type, q, row, offset, n);
  }
}

void KvAxpy(uint32_t kv_type, float a, const void* row, int64_t offset, float* y, int64_t n) {
  switch (kv_type) {
    case GGML_TYPE_F32: return AxpyF32(a, static_cast<const float*>(row) + offset, y, n);
    case GGML_TYPE_F16: return AxpyF16(a, static_cast<const gguflow_fp16_t*>(row) + offset, y, n);
    default: return AxpyBlocks(kv_type, a, row, offset, y, n);
  }
}

}  // namespace gguflow::kernels
