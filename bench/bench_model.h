// The model the executor-level benchmarks run on: $GGUFLOW_BENCH_MODEL if set, else the
// Qwen2.5-0.5B-shaped Q4_K_M model synthesized once per process into a temporary folder
// (removed at exit). Synthesizing takes seconds (runtime/tools/synth.h).
#pragma once

#include <string>

namespace gguflow::bench {

// Path of the benchmark model; the first call may synthesize it.
const std::string& bench_model_path();

}  // namespace gguflow::bench
