// matmul: y = W x (+ bias) on a lazily bound quantized weight, through the kernel table.
//
// Two phases so that the caller can split work across threads and reuse the encoded input:
//  1. quantize_activations: every input row is encoded once in the plugin's activation format
//     for W's type (Q8_0, Q8_1, Q8_K, F16, BF16 or F32) into a caller-owned scratch buffer.
//  2. matmul_rows: output rows [row_begin, row_end) of every input row, with mat_vec for one
//     input row (decode) and mat_mat for a batch (prefill), then the optional f32 bias.
// Each output element is one fixed sequence of kernel operations, so any row split gives
// bit-identical results.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ops/weight_view.h"
#include "plugins/abi/kernel_abi.h"

namespace gguflow::ops {

// Throws gguflow::Error naming `weight_name` when the kernel table has no kernel for w.type or
// the row length does not fit the activation format's block size.
void check_matmul_supported(const GguflowKernels& k, const WeightView& w,
                            std::string_view weight_name);

// Bytes of one encoded activation row of w.n elements (the scratch row stride).
size_t activation_row_bytes(const GguflowKernels& k, const WeightView& w);

// act[a] = encode(x[a]) for a in [0, n_act); x: [n_act][w.n] f32,
// act: [n_act][activation_row_bytes(k, w)] bytes.
void quantize_activations(const GguflowKernels& k, const WeightView& w, const float* x,
                          int64_t n_act, void* act);

// y[a * y_stride + r] = dot(W row r, act row a) (+ bias[r]) for r in [row_begin, row_end),
// a in [0, n_act). act as written by quantize_activations; bias: [w.n_rows] f32 or null;
// y: [n_act][y_stride] f32 with y_stride >= w.n_rows.
void matmul_rows(const GguflowKernels& k, const WeightView& w, const void* act, int64_t n_act,
                 int64_t row_begin, int64_t row_end, const float* bias, float* y,
                 int64_t y_stride);

}  // namespace gguflow::ops
