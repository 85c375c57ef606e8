// The normal-inverse-Wishart model's marginal likelihood from the textbook update (Murphy 2007, "Conjugate Bayesian
// analysis of the Gaussian distribution", section 9), written independently of stdlib/conjugate/niw_normal.cpp:
// a two-pass scatter, determinants from Eigen's LU, the multivariate gamma as its product.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <Eigen/Dense>

#include <cmath>
#include <numbers>
#include <vector>

namespace vnt::test {

struct NiwPrior {
  Eigen::VectorXd m;
  double k, v;
  Eigen::MatrixXd s;
};

/// log p(xs) when mu | Sigma ~ N(m, Sigma / k) and Sigma ~ IW(v, S).
inline double niw_log_marginal(const NiwPrior& p, const std::vector<Eigen::VectorXd>& xs) {
  const auto d = static_cast<double>(p.m.size());
  const auto n = static_cast<double>(xs.size());
  if (xs.empty()) return 0;
  Eigen::VectorXd mean = Eigen::VectorXd::Zero(p.m.size());
  for (const Eigen::VectorXd& x : xs) mean += x / n;
  Eigen::MatrixXd scatter = Eigen::MatrixXd::Zero(p.m.size(), p.m.size());
  for (const Eigen::VectorXd& x : xs) scatter += (x - mean) * (x - mean).transpose();
  const double kn = p.k + n, vn = p.v + n;
  const Eigen::MatrixXd sn = p.s + scatter + (p.k * n / kn) * (mean - p.m) * (mean - p.m).transpose();
  auto log_multi_gamma = [&](double a) {
    double r = d * (d - 1) / 4 * std::log(std::numbers::pi);
    for (int j = 1; j <= static_cast<int>(d); ++j) r += std::lgamma(a + (1.0 - j) / 2);
    return r;
  };
  return -n * d / 2 * std::log(std::numbers::pi) + log_multi_gamma(vn / 2) - log_multi_gamma(p.v / 2) +
         p.v / 2 * std::log(p.s.determinant()) - vn / 2 * std::log(sn.determinant()) +
         d / 2 * std::log(p.k / kn);
}

}  // namespace vnt::test
