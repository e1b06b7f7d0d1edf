// Principal components of cached key/value vectors: mean-centred covariance accumulated in
// double, a symmetric eigen-decomposition (cyclic Jacobi), cumulative energy curves and the
// rank a threshold needs.
//
// Conventions. Data vectors have `dim` values (a layer's n_head_kv * head_dim, or one head's
// head_dim). The covariance is normalised by the number of samples n (not n - 1): then the
// mean squared reconstruction error of projecting centred data on the top r eigenvectors equals
// the sum of the dropped eigenvalues exactly, which is what the energy curve reports.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace gguflow::lowrank {

// Accumulates sum(x) and sum(x x^T) in double over samples of one fixed dimension.
class CovarianceAccumulator {
 public:
  explicit CovarianceAccumulator(int64_t dim);

  // Adds `n` samples, rows of `dim` floats spaced `stride` floats apart (stride >= dim), so a
  // head's slice of a cache row can be added in place.
  void add(const float* rows, int64_t n, int64_t stride);
  void add(std::span<const float> row) { add(row.data(), 1, dim_); }

  int64_t dim() const { return dim_; }
  int64_t count() const { return count_; }
  std::vector<double> mean() const;        // [dim]
  // Mean-centred covariance, normalised by count(): [dim][dim] row-major, symmetric.
  std::vector<double> covariance() const;

 private:
  int64_t dim_;
  int64_t count_ = 0;
  std::vector<double> sum_;     // [dim]
  std::vector<double> second_;  // [dim][dim] sum of x_i x_j (upper triangle filled)
};

// Eigen-decomposition of a symmetric matrix: values sorted descending, vectors[k] is the unit
// eigenvector of values[k] ([dim][dim], row k = vector k).
struct EigenSystem {
  std::vector<double> values;   // [dim]
  std::vector<double> vectors;  // [dim][dim]
  int64_t dim = 0;
  int sweeps = 0;               // Jacobi sweeps it took
};

// Cyclic Jacobi rotations until every off-diagonal entry is negligible against the diagonal
// (or 100 sweeps). `a` is [dim][dim] row-major and must be symmetric (checked: a bad matrix is
// an invariant failure, callers build it from CovarianceAccumulator). Fine up to dim ~ 256.
EigenSystem symmetric_eigen(std::span<const double> a, int64_t dim);

// energy[r] for r = 0..dim: the fraction of the total variance the top r components hold
// (energy[0] = 0, energy[dim] = 1). Negative eigenvalues (rounding) count as 0. All-zero data
// (no variance) gives energy[r] = 1 for every r >= 0: rank 0 already reconstructs it.
std::vector<double> cumulative_energy(std::span<const double> sorted_values);

// The smallest r with energy[r] >= threshold (threshold in (0, 1]; 1 - 1e-12 counts as 1 so
// rounding in the sums cannot force a full rank on rank-deficient data).
int64_t rank_for_energy(std::span<const double> energy, double threshold);

// Everything PCA gives for one group of vectors (a layer's K, a head's V, ...).
struct Components {
  std::vector<double> mean;      // [dim]
  EigenSystem eigen;             // of the covariance around `mean`
  std::vector<double> energy;    // [dim + 1], cumulative_energy(eigen.values)
  int64_t samples = 0;
};
// Throws gguflow::Error when fewer than `min_samples` vectors were seen (naming `what`).
Components principal_components(const CovarianceAccumulator& acc, int64_t min_samples,
                                const char* what);

}  // namespace gguflow::lowrank
