// softcap: y = cap * tanh(x / cap), elementwise (gemma 2 caps its attention and final logits).
#pragma once

#include <cstdint>

namespace gguflow::ops {

// x, y: [n] f32; y may be x; cap > 0. In float, in this order (as ggml's softcap):
// inv = 1.0f / cap once, then y = tanhf(x * inv) * cap.
void softcap(const float* x, float* y, int64_t n, float cap);

}  // namespace gguflow::ops
