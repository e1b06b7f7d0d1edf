// normalize: scales each row to unit length (embedding graphs), or leaves it as it is.
#pragma once

#include <cstdint>
#include <string_view>

#include "plugins/abi/kernel_abi.h"

namespace gguflow::ops {

enum class NormalizeMode { kNone, kL2 };

// Parses a mode as the normalize op's `mode` attribute spells it (ops/normalize_op.cc: l2,
// none); throws gguflow::Error naming the value and the accepted ones.
NormalizeMode parse_normalize_mode(std::string_view name);

// x, y: [n_rows][n] f32 (y may be x). kL2: y = x / max(||x||_2, 1e-12); a zero row stays zero.
void normalize(const GguflowKernels& k, NormalizeMode mode, const float* x, float* y,
               int64_t n_rows, int64_t n);

}  // namespace gguflow::ops
