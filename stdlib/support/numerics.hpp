// Private numerically careful scalar functions shared by several builtins.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cmath>

namespace vnt::stdlib {

/// 1 / (1 + e^-x) without overflow in either tail: the exponential taken is e^-|x| <= 1. Exact 0 and 1 only
/// where the true value rounds there (x below about -745, above about 37).
inline double logistic(double x) {
  if (x >= 0.0) return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);
  return e / (1.0 + e);
}

}  // namespace vnt::stdlib
