// Helpers shared by the op unit tests: deterministic random buffers and comparisons against
// double-precision references.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace gguflow::test {

// n floats ~ N(mean, stddev) from a fixed seed.
inline std::vector<float> random_floats(size_t n, uint32_t seed, float mean = 0.0f,
                                        float stddev = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(mean, stddev);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Every |got - want| <= abs_tol + rel_tol * |want|.
inline void expect_close(const std::vector<float>& got, const std::vector<double>& want,
                         double abs_tol, double rel_tol = 0.0) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], abs_tol + rel_tol * std::fabs(want[i])) << "at index " << i;
}

}  // namespace gguflow::test
