// slice: out = x[offset : offset + length] of every row (phi3 splits its fused attn_qkv rows
// into q, k, v and its ffn_up rows into gate and up). A copy.
#pragma once

#include <cstdint>

namespace gguflow::ops {

// x: [n_rows][n] f32, y: [n_rows][length] f32 (distinct); offset + length <= n.
void slice(const float* x, float* y, int64_t n_rows, int64_t n, int64_t offset, int64_t length);

}  // namespace gguflow::ops
