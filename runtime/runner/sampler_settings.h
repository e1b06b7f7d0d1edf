// Sampler configuration for `gguflow run`: the graph's `sampler:` section sets the defaults
// (runtime/graph/sampler_section.h), command-line flags override them, and the result is
// validated once.
#pragma once

#include <cstdint>
#include <optional>

#include "runtime/graph/sampler_section.h"
#include "runtime/sampling/sampler.h"

namespace gguflow::runner {

// Command-line values; nullopt where the flag was not given.
struct SamplerOverrides {
  std::optional<float> temperature, top_p, min_p, repeat_penalty;
  std::optional<int> top_k, repeat_last_n;
  std::optional<uint64_t> seed;
};

// The section's settings applied over sampling::SamplerConfig's defaults. Keys: temperature,
// top_k, top_p, min_p, repeat_penalty, repeat_last_n, seed. Throws gguflow::Error
// "FILE:LINE:COL: sampler: KEY: ..." for an unknown key (with the known ones) or a value that is
// not a number of the right kind.
sampling::SamplerConfig config_from_section(const graph::SamplerSection& section);

// `base` with the given overrides applied, then validated (throws naming the field).
sampling::SamplerConfig apply_overrides(sampling::SamplerConfig base,
                                        const SamplerOverrides& overrides);

// Whether a seed was chosen by the graph or the command line; when neither did, the runner
// draws one (and reports it so that the run can be repeated).
bool section_sets_seed(const graph::SamplerSection& section);

}  // namespace gguflow::runner
