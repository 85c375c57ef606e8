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

namespace vnt {

struct PlateNode;

class LogisticProxy {
 public:
  /// Proxies of every row of `plate` around `ref` (bias first, as long as a row's features plus one): O(N D^2)
  /// to build, and O(D^2) to keep: a row's own Taylor coefficients are recomputed when it is scored (one dot
  /// product and one exp), which is cheaper than reading them from an array as large as the data.
  /// Null if the plate has no dense fused logistic rows or an observed value other than 0 and 1.
  static std::unique_ptr<LogisticProxy> build(const PlateNode& plate, const Eigen::VectorXd& ref);
  /// Builds these proxies (again) around `ref`; false, and rows() == 0, where build gives null. Spends the excess.
  bool rebuild(const PlateNode& plate, const Eigen::VectorXd& ref);

  /// The sum over all rows of p_i(to) - p_i(from), the proxies' change for a move of the weights.
  double sum(const Eigen::VectorXd& from, const Eigen::VectorXd& to) const;

  /// For each row i = rows[j]: r[j] = l_i(to) - l_i(from) - (p_i(to) - p_i(from)). Returns the sum over these rows
  /// of p_i(to) - p_i(from); with `taylor_from`, also adds to it what changes_and_taylor returns for them.
  double residuals(const PlateNode& plate, const Eigen::VectorXd& from, const Eigen::VectorXd& to,
                   const uint32_t* rows, size_t k, double* r, double* taylor_from = nullptr) const;

  /// For each row i = rows[j]: out[j] = l_i(to) - l_i(from), as logistic_log_density_changes. Returns the sum over
  /// these rows of the change their proxies would have if built around `from`: what a build at the current value
  /// in the middle of a decision needs to know of the rows already scored, at no extra pass over them.
  static double changes_and_taylor(const PlateNode& plate, const Eigen::VectorXd& from, const Eigen::VectorXd& to,
                                   const uint32_t* rows, size_t k, double* out);

  /// Rows of the plate when the proxies were built (rows added later make them stale); 0 while none are built.
  size_t rows() const { return rows_; }
  const Eigen::VectorXd& reference() const { return ref_; }

  /// The cost of building proxies for one row, in rows scored by `residuals`, for weights of length `dims`.
  /// Measured by bench/bench_proxy_cost: 0.3 at dims 3, 0.45 at dims 5, 2.1 at dims 51 (the O(dims^2) Hessian).
  static double build_cost(size_t dims) { return 0.2 + static_cast<double>(dims) / 27; }

  /// Rows scored after the first look of their decision (k0 mini-batches) since the proxies were last built (or
  /// since subsampled_mh first wanted them), except in decisions whose proxies were built at their current value:
  /// the work proxies at the current value would likely have saved. subsampled_mh builds them when this reaches
  /// the cost of a build (a ski-rental rule), before a decision or within one.
  double excess = 0;

 private:
  Eigen::VectorXd ref_;
  Eigen::VectorXd g_;  // sum of f'(z*_i) x~_i, f(z) = log p(y | logistic(z)), z*_i = w* . x~_i
  Eigen::MatrixXd h_;  // sum of f''(z*_i) x~_i x~_i^T
  size_t rows_ = 0;
};

}  // namespace vnt
