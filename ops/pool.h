// pool: reduces the token axis of a [n_tokens][n] sequence to one vector (embedding graphs).
#pragma once

#include <cstdint>
#include <string_view>

#include "plugins/abi/kernel_abi.h"

namespace gguflow::ops {

enum class PoolMode { kNone, kMean, kSum, kLast, kFirst };

// Parses a mode as the pool op's `mode` attribute spells it (ops/pool_op.cc: none, mean, sum,
// last, first, alias cls); throws gguflow::Error naming the value and the accepted ones.
PoolMode parse_pool_mode(std::string_view name);

// Rows the output has: n_tokens for kNone, else 1.
int64_t pool_output_rows(PoolMode mode, int64_t n_tokens);

// x: [n_tokens][n] f32 (n_tokens >= 1); y: [pool_output_rows][n] f32, distinct from x.
// Sums run over tokens in order 0..n_tokens-1.
void pool(const GguflowKernels& k, PoolMode mode, const float* x, int64_t n_tokens, int64_t n,
          float* y);

}  // namespace gguflow::ops
