// The logistic function and the log densities it leads to, exact in both tails (shared by linear_logistic,
// bernoulli scored from log-odds, and logistic-regression plates).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cmath>
#include <limits>

namespace vnt {

/// 1 / (1 + e^-x) without overflow in either tail: the exponential taken is e^-|x| <= 1. Exact 0 and 1 only
/// where the true value rounds there (x below about -745, above about 37).
inline double logistic(double x) {
  if (x >= 0.0) return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);
  return e / (1.0 + e);
}

/// log(1 + e^t) without overflow or cancellation.
inline double softplus(double t) { return t > 0 ? t + std::log1p(std::exp(-t)) : std::log1p(std::exp(t)); }

/// log p(y | logistic(z)) of a bernoulli observation y (0 or 1; -inf otherwise), exact in both tails:
/// log logistic(z) = -softplus(-z), log(1 - logistic(z)) = -softplus(z).
inline double logistic_log_density(double z, double y) {
  if (y == 1.0) return -softplus(-z);
  if (y == 0.0) return -softplus(z);
  return -std::numeric_limits<double>::infinity();
}

}  // namespace vnt
