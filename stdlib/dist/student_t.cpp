// student_t(nu, loc = 0, scale = 1): Student's t with nu degrees of freedom, shifted by loc and scaled by scale.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <boost/random/gamma_distribution.hpp>
#include <boost/random/student_t_distribution.hpp>
#include <cmath>
#include <limits>
#include <numbers>

#include "runtime/sp/distribution_sp.hpp"
#include "runtime/sp/registry.hpp"
#include "stdlib/support/large_gamma.hpp"

namespace vnt::stdlib {
namespace {

inline constexpr double kHalfLogPi = 0.57236494292470008707;

// log Γ((nu + 1) / 2) - log Γ(nu / 2) - log(nu) / 2: the log density at loc, less -log(scale) - log(pi) / 2.
double student_t_log_norm(double nu) {
  const double a = nu / 2;
  if (a >= 10) {
    // Stirling: lgamma(a + 1/2) - lgamma(a) cancels (4e-10 nat lost at nu = 1e6, inf - inf above 5e305), and is
    // log(a) / 2 + a log1pmx(1 / (2 a)) + the corrections; log(a) / 2 - log(nu) / 2 is -log(2) / 2.
    return a * log1pmx(0.5 / a) + stirling_correction(a + 0.5) - stirling_correction(a) - 0.5 * std::numbers::ln2;
  }
  // log Γ(a) = log Γ(a + 1) - log a, with log a = log nu - log 2: nu / 2 rounds for subnormal nu (to 0 at the least),
  // and lgamma(0) is inf.
  return std::lgamma(a + 0.5) - std::lgamma(a + 1) + 0.5 * std::log(nu) - std::numbers::ln2;
}

// log(1 + w^2) for w = |x - loc| / (scale sqrt(nu)), also where x - loc, w or w^2 overflows: from logarithms then,
// and finite (at most 2 (log(3.6e308) + 745 + 373)).
double student_t_log1p_w2(double x, double loc, double scale, double nu) {
  const double d = std::abs(x - loc);
  const double w = d / scale / std::sqrt(nu);
  // A subnormal w^2 loses bits: at most (nu / 2 + 1/2) 2.5e-324 < 3e-16 nat of the log density.
  if (w < 1e150) return std::log1p(w * w);
  // x - loc overflows only for x and loc of opposite signs: |x - loc| = |x| + |loc|.
  const double log_d = std::isinf(d) ? std::log(std::abs(x) / 2 + std::abs(loc) / 2) + std::numbers::ln2 : std::log(d);
  const double log_w2 = 2 * (log_d - std::log(scale)) - std::log(nu);
  return log_w2 > 40 ? log_w2 + std::exp(-log_w2) : std::log1p(std::exp(log_w2));
}

struct StudentT {
  static constexpr std::string_view kName = "student_t";
  static constexpr ParamSpec kParams[] = {
      {"nu", Domain::kPositive}, {"loc", Domain::kReal, 0.0}, {"scale", Domain::kPositive, 1.0}};
  static constexpr Support kSupport = Support::kReal;

  // Below this nu, the chi-squared draw of Boost's t underflows to 0 with probability about e^(-372 nu) (t = inf),
  // and its subnormal values are inexact: draw it in logs, as beta does its gammas.
  static constexpr double kTinyNu = 0.2;

  static double simulate(Rng& rng, double nu, double loc, double scale) {
    double x = 0;
    if (nu < kTinyNu) {
      x = loc + tiny_nu_scaled_draw(rng, nu, scale);
    } else {
      // Above 2e10 Boost's gamma sampler drifts (large_gamma.hpp): t = z / sqrt(chi^2 / nu), with chi^2 / nu a unit
      // gamma of shape nu / 2.
      const double t = nu / 2 < kHugeShape ? boost::random::student_t_distribution<double>(nu)(rng.engine())
                                           : rng.normal() / std::sqrt(unit_gamma_draw(rng, nu / 2));
      x = loc + scale * t;
    }
    // The heavy tails reach past the largest double ((student_t 0.5) in one draw in 2e154, (student_t 0.01) in one in
    // 1250), and loc + scale t overflows for huge parameters: keep draws finite, as normal does.
    constexpr double kMax = std::numeric_limits<double>::max();
    return std::clamp(x, -kMax, kMax);
  }
  static double log_density(double x, double nu, double loc, double scale) {
    if (!std::isfinite(x)) return kNegInf;
    // No lgamma difference, no scale sqrt(nu pi) and no z^2: each overflows, or is inf - inf, at valid parameters.
    return student_t_log_norm(nu) - kHalfLogPi - std::log(scale) -
           (nu / 2 + 0.5) * student_t_log1p_w2(x, loc, scale, nu);
  }

 private:
  // scale t for t = z / sqrt(g / a), g ~ gamma(a = nu / 2, 1) drawn as log g = log g(a + 1) + log(u) / a (Marsaglia
  // and Tsang), all in logs: g underflows, and t may overflow where scale t does not.
  static double tiny_nu_scaled_draw(Rng& rng, double nu, double scale) {
    const double a = nu / 2, log_a = std::log(nu) - std::numbers::ln2;
    const double z = rng.normal();
    const double g1 = boost::random::gamma_distribution<double>(a + 1, 1.0)(rng.engine());
    const double log_g = std::log(g1) + 2 * std::log(rng.uniform()) / nu;  // not / a: nu / 2 rounds
    const double magnitude = std::exp(std::log(scale) + std::log(std::abs(z)) + 0.5 * (log_a - log_g));
    // z = 0 with u = 0 (each about 2^-64) is 0 times inf: the draw is then loc.
    return std::isnan(magnitude) ? 0.0 : std::copysign(magnitude, z);
  }
};

}  // namespace

void register_student_t(SpRegistry& r) { r.add(make_distribution_sp<StudentT>()); }

}  // namespace vnt::stdlib
