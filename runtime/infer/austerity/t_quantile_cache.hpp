// Critical values T⁻¹_{n−1}(1 − ε) of the austerity test, memoised per test point, so the hot loop
// compares |t| with a number instead of evaluating a Student-t CDF.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace vnt {

/// What one step of the sequential test concludes.
enum class TestOutcome { kContinue, kAccept, kReject };

/// What ε bounds. kPerTest (the papers' rule): each test's error, so a decision made after k tests may err
/// with probability up to about k·ε. kPerDecision: the whole decision's, spending ε_k = 6ε/(π²k²) on test k
/// (Σ_k ε_k = ε, so by the union bound the decision errs with probability at most ε under the t
/// approximation) at the price of larger critical values, hence more data per decision.
enum class ErrorSpending : uint8_t { kPerTest, kPerDecision };

/// Memoised critical values for one (ε, Nbatch) pair. The k-th test (k ≥ 1) of a sequential test sees
/// n = k·Nbatch values (only the last, partial mini-batch has n = N, and that one is decided exactly),
/// so the cache is indexed by k and does not depend on N. Keep one per kernel and pass it to every
/// transition; it is not thread-safe (one per thread or chain).
class TQuantileCache {
 public:
  TQuantileCache() = default;
  /// Ready for (ε, Nbatch) without checking them. Preconditions: 0 ≤ ε < 1, batch ≥ 1.
  TQuantileCache(double epsilon, size_t batch, ErrorSpending spending = ErrorSpending::kPerTest) {
    bind(epsilon, batch, spending);
  }

  /// Rebinds to (ε, Nbatch), dropping the cached values if either changed; O(1) when unchanged.
  /// Preconditions as for the constructor (SequentialTestConfig::validate checks them).
  void bind(double epsilon, size_t batch, ErrorSpending spending = ErrorSpending::kPerTest) {
    if (epsilon == epsilon_ && batch == batch_ && spending == spending_) return;
    epsilon_ = epsilon;
    batch_ = batch;
    spending_ = spending;
    critical_.clear();
    filled_ = 0;
    floor_ = floor(epsilon_at(1));
  }

  double epsilon() const { return epsilon_; }
  size_t batch() const { return batch_; }
  ErrorSpending spending() const { return spending_; }
  /// The error allowed to test k: ε, or 6ε/(π²k²) when spending per decision.
  double epsilon_at(size_t k) const;

  /// c_k = T⁻¹_{df}(1 − ε_k) with df = k·Nbatch − 1 and ε_k = epsilon_at(k), the critical value of the k-th test; +inf when ε = 0.
  /// Preconditions: bound, k ≥ 1, k·Nbatch ≥ 2. Throws kInternal if Boost.Math fails.
  double critical(size_t k) {
    if (k <= critical_.size() && !std::isnan(critical_[k - 1])) return critical_[k - 1];
    return fill(k);
  }

  /// The test's decision at test point k for the statistic t: reject if t < −c_k, accept if t > c_k,
  /// otherwise continue (so a tie continues, and ε = 0 never decides). This is the rule
  /// "reject if T_{df}(t) < ε, accept if T_{df}(t) > 1 − ε" with the CDF inverted once.
  /// Most tests of a long decision see a |t| below every critical value, which classify() tells from a
  /// bound without computing c_k (a Boost.Math quantile costs about 5 us, as much as scoring 100 rows).
  TestOutcome classify(double t, size_t k) {
    if (std::abs(t) <= floor_) return TestOutcome::kContinue;
    const double c = critical(k);
    if (t < -c) return TestOutcome::kReject;
    if (t > c) return TestOutcome::kAccept;
    return TestOutcome::kContinue;
  }

  /// Uncached T⁻¹_{df}(1 − ε) (computed as the upper-tail quantile, accurate for tiny ε); +inf for ε = 0.
  /// Preconditions: df ≥ 1, 0 ≤ ε < 1. Throws kInternal if Boost.Math fails.
  static double compute(double epsilon, size_t df);

  /// A lower bound of every critical value for an error of at most `epsilon` per test: the normal quantile
  /// z(1 - epsilon) less a relative 1e-12 (the t distribution's upper quantiles exceed the normal's, by
  /// (z^3 + z)/(4 df) to first order: far more than rounding for any df a test can have), or -inf for epsilon
  /// above 1/2, where they do not.
  static double floor(double epsilon);

  /// Critical values computed since the last change of (ε, Nbatch).
  size_t filled() const { return filled_; }

 private:
  double fill(size_t k);  // cold: computes and stores c_k

  double epsilon_ = -1.0;  // unbound until bind()
  size_t batch_ = 0;
  ErrorSpending spending_ = ErrorSpending::kPerTest;
  std::vector<double> critical_;  // critical_[k − 1] = c_k; NaN = not yet computed
  size_t filled_ = 0;
  double floor_ = 0;  // floor(the largest ε_k): at most every c_k
};

}  // namespace vnt
