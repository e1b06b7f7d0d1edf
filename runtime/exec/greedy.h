// Greedy decoding on a Session: the prompt as one prefill, then argmax token by token.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/sampling/sampling_filters.h"

namespace gguflow::exec {

// Index of the largest value; ties go to the lowest index (as llama.cpp's greedy sampler).
using sampling::argmax;

// Prefills `prompt`, then appends up to `n_steps` argmax tokens, each fed back with decode().
// Stops early after emitting a token in `stop_tokens`, or when the context is full.
// `on_token` (optional) sees each new id as it is chosen. Returns the generated ids.
std::vector<int32_t> greedy_generate(Session& session, std::span<const int32_t> prompt,
                                     int64_t n_steps, std::span<const int32_t> stop_tokens = {},
                                     const std::function<void(int32_t)>& on_token = {});

}  // namespace gguflow::exec
