// Control variates for the rows of a fused logistic plate (Bardenet, Doucet & Holmes 2017, "confidence sampler
// with proxies"): each row's log-likelihood l_i(w) = f(z_i, y_i), z_i = w~ . x~_i, gets a second-order Taylor
// proxy in z around a reference weight vector w*. The sum of the proxies' changes over all N rows is known in
// O(D^2) from two sums built once, so subsampled_mh can test the mean of the residuals l_i - p_i against a
// shifted threshold: the same decision problem (exact when every row is seen), with a variance that vanishes as
// the move and its distance to w* shrink. Weight vectors here have the bias first (see logistic_weights).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace vnt {

struct PlateNode;

class LogisticProxy {
 public:
  /// Proxies of every row of `plate` around `ref` (bias first, as long as a row's features plus one): O(N D^2).
  /// Null if the plate has no dense fused logistic rows or an observed value other than 0 and 1.
  static std::unique_ptr<LogisticProxy> build(const PlateNode& plate, const Eigen::VectorXd& ref);
  /// Builds these proxies again around `ref`, reusing their storage; false (and unusable) where build is null.
  bool rebuild(const PlateNode& plate, const Eigen::VectorXd& ref);

  /// The sum over all rows of p_i(to) - p_i(from), the proxies' change for a move of the weights.
  double sum(const Eigen::VectorXd& from, const Eigen::VectorXd& to) const;

  /// For each row i = rows[j]: r[j] = l_i(to) - l_i(from) - (p_i(to) - p_i(from)).
  void residuals(const PlateNode& plate, const Eigen::VectorXd& from, const Eigen::VectorXd& to,
                 const uint32_t* rows, size_t k, double* r) const;

  /// Rows of the plate when the proxies were built (rows added later make them stale).
  size_t rows() const { return coef_.size(); }
  const Eigen::VectorXd& reference() const { return ref_; }

  /// The cost of building proxies for one row, in rows scored by `residuals`, for weights of length `dims`.
  /// Measured (bench/bench_proxy_cost): 0.8-1.0 at dims 3 and 2.1 at dims 51, where the O(dims^2) Hessian
  /// dominates.
  static double build_cost(size_t dims) { return 0.75 + static_cast<double>(dims) / 32; }

  /// Rows scored after the first look of their decision (k0 mini-batches) since the proxies were built: the work proxies
  /// at the current value would likely have saved. subsampled_mh builds them again when this reaches the cost
  /// of a build (a ski-rental rule: the rebuilds never cost more than the extra rows that paid for them).
  double excess = 0;

 private:
  /// Per row: f'(z*) and f''(z*) of f(z) = log p(y | logistic(z)), and z* itself.
  struct Coef {
    double d1, d2, zref;
  };
  Eigen::VectorXd ref_;
  Eigen::VectorXd g_;  // sum of d1_i x~_i
  Eigen::MatrixXd h_;  // sum of d2_i x~_i x~_i^T
  std::vector<Coef> coef_;
};

}  // namespace vnt
