// The `sampler:` section of a graph file: the sampling stage that turns the graph's logits into
// the next token, named by the graph so that a pipeline chooses how it is sampled.
//
//   sampler:
//     input: logits        # which declared output is sampled (default: the first)
//     temperature: 0.8     # every other key is a setting of the stage, a plain scalar
//     top_k: 40
//
// The settings are defaults: `gguflow run` flags (--temp, --top-k, ...) override them. A file
// with `extends` inherits its base's section; its own keys override the base's one by one.
// This file only reads and locates the section (the graph loader accepts and ignores the key);
// what the settings mean is the sampler's business (runtime/runner/sampler_settings.h).
#pragma once

#include <string>
#include <vector>

#include "runtime/graph/graph.h"

namespace gguflow::graph {

struct StageSetting {
  std::string key;    // "temperature"
  std::string value;  // the scalar as written: "0.8"
  Location where;     // of the value, for error messages
};

struct SamplerSection {
  bool present = false;               // some file in the extends chain has `sampler:`
  std::string input;                  // `input:`; "" when not given
  Location input_where;
  std::vector<StageSetting> settings;  // every other key, in file order (base first); a derived
                                       // file's value replaces the base's in place
};

// Reads the section of `path` and of the files it extends. Throws gguflow::Error
// "FILE:LINE:COL: ..." when the file cannot be read, `sampler:` is not a map, or a value is not
// a plain scalar. Extends chains are followed as the graph loader does (relative to the file).
SamplerSection load_sampler_section(const std::string& path);

// The section as YAML (`sampler:` and one indented line per key, values as written), for
// `gguflow lower`, so a lowered file samples like its template. "" when not present.
std::string sampler_section_yaml(const SamplerSection& section);

// The declared output the section samples: `input` checked against the graph's outputs (throws
// naming the section's place and the outputs), or the graph's first output when not given.
int sampler_input_tensor(const SamplerSection& section, const Graph& graph);

}  // namespace gguflow::graph
