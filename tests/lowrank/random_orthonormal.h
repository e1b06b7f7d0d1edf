// Random orthonormal bases for the low-rank KV tests (known spectra, exact projections).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace gguflow::test {

// Rows of an orthonormal [n][n] matrix: Gram-Schmidt of Gaussian rows drawn from `rng`.
inline std::vector<double> random_orthonormal(int64_t n, std::mt19937_64& rng) {
  std::normal_distribution<double> g;
  std::vector<double> q(n * n);
  for (auto& x : q) x = g(rng);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < i; ++j) {
      double d = 0;
      for (int64_t k = 0; k < n; ++k) d += q[i * n + k] * q[j * n + k];
      for (int64_t k = 0; k < n; ++k) q[i * n + k] -= d * q[j * n + k];
    }
    double norm = 0;
    for (int64_t k = 0; k < n; ++k) norm += q[i * n + k] * q[i * n + k];
    for (int64_t k = 0; k < n; ++k) q[i * n + k] /= std::sqrt(norm);
  }
  return q;
}

}  // namespace gguflow::test
