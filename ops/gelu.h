// gelu: the GELU activation, y = x * Phi(x), exactly (erf) or by the tanh approximation
// (gemma, GPT-2 and most GGUF models use tanh; bert's "gelu" is erf). gelu_mul shares it.
#pragma once

#include <cmath>
#include <cstdint>

#include "plugins/abi/kernel_abi.h"

namespace gguflow::ops {

enum class GeluApprox : uint8_t { kTanh, kErf };

// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), in float in this order.
inline float gelu_tanh(float x) {
  constexpr float kSqrt2OverPi = 0.79788456080286535588f;
  constexpr float kCoef = 0.044715f;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + kCoef * x * x * x)));
}

// 0.5 x (1 + erf(x / sqrt(2))), in float (x * (1/sqrt(2)) for the division).
inline float gelu_erf(float x) {
  constexpr float kInvSqrt2 = 0.70710678118654752440f;
  return 0.5f * x * (1.0f + std::erf(x * kInvSqrt2));
}

// x, y: [n] f32; y may be x. The tanh approximation runs in the kernel plugin (a vector tanh);
// erf in scalar float here.
void gelu(const GguflowKernels& k, const float* x, float* y, int64_t n, GeluApprox approx);

}  // namespace gguflow::ops
