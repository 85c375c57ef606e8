// Gamma-function quantities for parameters too large for lgamma: lgamma overflows to inf above about 2.5e305,
// and forms such as lgamma(a) + lgamma(b) - lgamma(a + b) then give inf - inf (NaN) well before that loses all
// accuracy. Stirling's series, written so that no intermediate overflows, takes over for large arguments.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/math/special_functions/log1p.hpp>
#include <boost/random/gamma_distribution.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "runtime/core/rng.hpp"
#include "stdlib/support/log_2pi.hpp"

namespace vnt::stdlib {

/// Above this, densities use the Stirling forms below: the lgamma forms lose ~1e-9 nat to cancellation there,
/// and below it they are kept so that everyday parameters score (and so decide) exactly as before.
inline constexpr double kLargeParameter = 1e6;
/// Above this shape, gamma draws use the Wilson-Hilferty transform: Boost's rejection sampler drifts beyond about
/// 1e12 (its acceptance test cancels) and overflows to inf near 1e308.
inline constexpr double kHugeShape = 1e10;

/// lgamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2), for x >= 10 (error below 1e-14); 0 for x = inf.
inline double stirling_correction(double x) {
  const double y = 1 / x, y2 = y * y;
  return y * (1.0 / 12 - y2 * (1.0 / 360 - y2 * (1.0 / 1260 - y2 * (1.0 / 1680 - y2 / 1188))));
}

/// log B(a, b) = lgamma(a) + lgamma(b) - lgamma(a + b) for positive finite a and b, finite where it is
/// representable (a + b itself may overflow). R's lbeta, with every ratio taken the side that cannot overflow.
inline double log_beta(double a, double b) {
  const double p = std::min(a, b), q = std::max(a, b);
  if (q < kLargeParameter) return std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b);
  const double log1p_pq = std::log1p(p / q);  // log((p + q) / q)
  if (p >= 10) {
    const double corr = stirling_correction(p) + stirling_correction(q) - stirling_correction(p + q);
    return kHalfLog2Pi - 0.5 * std::log(q) + corr - (p - 0.5) * std::log1p(q / p) - q * log1p_pq;
  }
  const double corr = stirling_correction(q) - stirling_correction(p + q);
  return std::lgamma(p) + corr + p - p * (std::log(q) + log1p_pq) - (q - 0.5) * log1p_pq;
}

/// log(1 + u) - u for u > -1, accurate near 0 (Boost's log1pmx); -inf at u = -1, which rounding can give.
inline double log1pmx(double u) { return u > -0.5 ? boost::math::log1pmx(u) : std::log1p(u) - u; }

/// log(t g(t)) for g the density of gamma(s, rate s) (mean 1) and s >= 10: s (log t + 1 - t) + log(s) / 2
/// - log(2 pi) / 2 - stirling_correction(s). A gamma density at x is this at t = rate x / s, minus log x; an
/// inv_gamma one the same at t = scale / (x s). `t` is computed directly (accurate near 1, possibly 0 or inf),
/// `log_t` from logs (finite).
inline double log_unit_gamma(double s, double t, double log_t) {
  // Near t = 1, log t + 1 - t cancels: log1pmx keeps it exact, which matters when s is large.
  const double core = t > 0.5 && t < 2 ? log1pmx(t - 1) : log_t + 1 - std::exp(log_t);
  return s * core + 0.5 * std::log(s) - kHalfLog2Pi - stirling_correction(s);
}

/// A draw of gamma(shape, 1) / shape, which has mean 1 and cannot overflow.
inline double unit_gamma_draw(Rng& rng, double shape) {
  if (shape < kHugeShape) return boost::random::gamma_distribution<double>(shape, 1.0)(rng.engine()) / shape;
  // Wilson-Hilferty: (G / shape)^(1/3) is normal with mean 1 - 1/(9 shape) and variance 1/(9 shape), to O(1/shape).
  const double c = 1 - 1 / (9 * shape) + rng.normal() / (3 * std::sqrt(shape));
  return std::max(c, 0.0) * c * c;
}

}  // namespace vnt::stdlib
