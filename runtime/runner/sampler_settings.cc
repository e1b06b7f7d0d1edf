#include "runtime/runner/sampler_settings.h"

#include <charconv>
#include <cmath>
#include <string>

#include "ops/error.h"
#include "runtime/graph/spec.h"

namespace gguflow::runner {
namespace {

constexpr const char* kKnownKeys =
    "temperature, top_k, top_p, min_p, repeat_penalty, repeat_last_n, seed";

double number(const graph::StageSetting& s) {
  const char* begin = s.value.data();
  const char* end = begin + s.value.size();
  double value = 0;
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value))
    graph::fail_at(s.where, "sampler: ", s.key, ": expected a number, found '", s.value, "'");
  return value;
}

int64_t integer(const graph::StageSetting& s) {
  const char* begin = s.value.data();
  const char* end = begin + s.value.size();
  int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end)
    graph::fail_at(s.where, "sampler: ", s.key, ": expected an integer, found '", s.value, "'");
  return value;
}

int small_integer(const graph::StageSetting& s) {
  const int64_t value = integer(s);
  if (value < 0 || value > (int64_t{1} << 30))
    graph::fail_at(s.where, "sampler: ", s.key, ": expected an integer in [0, 2^30], found ",
                   value);
  return static_cast<int>(value);
}

}  // namespace

sampling::SamplerConfig config_from_section(const graph::SamplerSection& section) {
  sampling::SamplerConfig config;
  for (const graph::StageSetting& s : section.settings) {
    if (s.key == "temperature") config.temperature = static_cast<float>(number(s));
    else if (s.key == "top_k") config.top_k = small_integer(s);
    else if (s.key == "top_p") config.top_p = static_cast<float>(number(s));
    else if (s.key == "min_p") config.min_p = static_cast<float>(number(s));
    else if (s.key == "repeat_penalty") config.repeat_penalty = static_cast<float>(number(s));
    else if (s.key == "repeat_last_n") config.repeat_last_n = small_integer(s);
    else if (s.key == "seed") {
      const int64_t seed = integer(s);
      if (seed < 0) graph::fail_at(s.where, "sampler: seed: expected an integer >= 0, found ", seed);
      config.seed = static_cast<uint64_t>(seed);
    } else {
      graph::fail_at(s.where, "sampler: unknown setting '", s.key, "': expected one of input, ",
                     kKnownKeys);
    }
  }
  try {
    config.validate();
  } catch (const Error& e) {  // name the graph file the out-of-range value came from
    if (section.settings.empty()) throw;
    throw error(section.settings.front().where.file, ": ", e.what());
  }
  return config;
}

sampling::SamplerConfig apply_overrides(sampling::SamplerConfig base,
                                        const SamplerOverrides& o) {
  if (o.temperature) base.temperature = *o.temperature;
  if (o.top_k) base.top_k = *o.top_k;
  if (o.top_p) base.top_p = *o.top_p;
  if (o.min_p) base.min_p = *o.min_p;
  if (o.repeat_penalty) base.repeat_penalty = *o.repeat_penalty;
  if (o.repeat_last_n) base.repeat_last_n = *o.repeat_last_n;
  if (o.seed) base.seed = *o.seed;
  base.validate();
  return base;
}

bool section_sets_seed(const graph::SamplerSection& section) {
  for (const graph::StageSetting& s : section.settings)
    if (s.key == "seed") return true;
  return false;
}

}  // namespace gguflow::runner
