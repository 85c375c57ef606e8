// Extra helpers for the posterior tests: negative controls, indicators, an independence check and exact
// reference values by Boost.Math adaptive quadrature (1-D, and nested for 2-D).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <numbers>
#include <source_location>
#include <span>
#include <string_view>
#include <vector>

#include "runtime/core/mcmc_stats.hpp"
#include "tests/support/stat_checks.hpp"

namespace vnt::test {

/// Negative control: `r` is a check against a deliberately wrong target (the prior, a shifted mean,
/// the posterior of another data set) evaluated on the same draws, and must fail. This shows that the
/// tolerance of the real check is tight enough to tell the right answer from a plausible wrong one.
inline bool expect_rejected(const CheckResult& r, std::source_location loc = std::source_location::current()) {
  if (!r.ok) {
    CHECK_MESSAGE(true, "negative control rejected as it should: " << r.message);
  } else {
    ADD_FAIL_CHECK_AT(loc.file_name(), static_cast<int>(loc.line()),
                      "negative control passed, so the check cannot tell this wrong target apart: " << r.message);
  }
  return !r.ok;
}

/// 1.0 where the draw equals `value`, else 0.0: the input of check_probability for a discrete choice.
inline std::vector<double> indicator(std::span<const double> draws, double value) {
  std::vector<double> out(draws.size());
  for (size_t i = 0; i < draws.size(); ++i) out[i] = draws[i] == value ? 1.0 : 0.0;
  return out;
}

/// The draws of `xs` at the rows where `cond` holds (both of the same length).
inline std::vector<double> where(std::span<const double> xs, std::span<const double> cond, double value) {
  std::vector<double> out;
  for (size_t i = 0; i < xs.size() && i < cond.size(); ++i)
    if (cond[i] == value) out.push_back(xs[i]);
  return out;
}

/// Sample correlation of paired draws against an expected value `rho`. With u, v the standardised
/// draws, r = mean(u v), whose standard error is sd(u v) / sqrt(ESS(u v)) by the Markov-chain CLT
/// (for independent normals sd(u v) = 1, so this is the familiar 1 / sqrt(n)); fails if
/// |r - rho| > z se. Meant for rho = 0 (independence) or a moderate known rho.
inline CheckResult evaluate_correlation(std::span<const double> xs, std::span<const double> ys, double rho,
                                        double z = 4.0) {
  if (xs.size() != ys.size() || xs.size() < 2) return {false, "check_correlation: mismatched or too few draws"};
  const double mx = mean(xs), my = mean(ys), sx = sample_sd(xs), sy = sample_sd(ys);
  if (!(sx > 0) || !(sy > 0)) return {false, fmt::format("check_correlation: a constant column (sd {}, {})", sx, sy)};
  std::vector<double> p(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) p[i] = (xs[i] - mx) / sx * ((ys[i] - my) / sy);
  const double ess = detail::ess_or_n(p);
  if (detail::too_few(ess)) return detail::too_few_result(ess, "check_correlation");
  const double r = mean(p);
  const double se = sample_sd(p) / std::sqrt(ess);
  const double score = detail::z_score(r - rho, se);
  return {std::abs(score) <= z, fmt::format("check_correlation: r {:.4g}, expected {:.4g} (se {:.3g}, ESS {:.1f}): "
                                            "z-score {:.3f}, allowed {}",
                                            r, rho, se, ess, score, z)};
}

inline bool check_correlation(std::span<const double> xs, std::span<const double> ys, double rho, double z = 4.0,
                              std::source_location loc = std::source_location::current()) {
  return detail::record(evaluate_correlation(xs, ys, rho, z), loc);
}

/// log N(x; mean, sd): the exact references' densities.
inline double log_normal_pdf(double x, double mean, double sd) {
  const double z = (x - mean) / sd;
  return -0.5 * z * z - std::log(sd) - 0.5 * std::log(2 * std::numbers::pi);
}

/// Mass, mean and sd of a distribution given by an unnormalised density.
struct Moments {
  double mass = 0, mean = 0, sd = 0;
};

/// Adaptive Gauss-Kronrod (61 points, relative tolerance 1e-11) of f over [a, b]; the bounds may be infinite.
template <class F>
double integrate(F&& f, double a, double b) {
  return boost::math::quadrature::gauss_kronrod<double, 61>::integrate(f, a, b, 20, 1e-11);
}

/// Moments of the density exp(log_density(x)) over [a, b] (unnormalised: mass is its integral). The
/// caller subtracts a constant near the maximum of log_density so that nothing underflows.
template <class LogDensity>
Moments moments_1d(LogDensity&& log_density, double a, double b) {
  const double m0 = integrate([&](double x) { return std::exp(log_density(x)); }, a, b);
  const double m1 = integrate([&](double x) { return x * std::exp(log_density(x)); }, a, b);
  const double m2 = integrate([&](double x) { return x * x * std::exp(log_density(x)); }, a, b);
  const double mu = m1 / m0;
  return {m0, mu, std::sqrt(m2 / m0 - mu * mu)};
}

/// Posterior moments of both coordinates of a 2-D density exp(log_density(x, y)) on [a, b]^2, by nested
/// adaptive Gauss-Kronrod quadrature (the inner integral over y for each outer node x).
struct Moments2d {
  Moments x, y;
};

template <class LogDensity>
Moments2d moments_2d(LogDensity&& log_density, double a, double b) {
  auto nested = [&](auto&& g) {
    return integrate(
        [&](double x) { return integrate([&](double y) { return g(x, y) * std::exp(log_density(x, y)); }, a, b); },
        a, b);
  };
  const double m0 = nested([](double, double) { return 1.0; });
  const double mx = nested([](double x, double) { return x; }) / m0;
  const double my = nested([](double, double y) { return y; }) / m0;
  const double vx = nested([&](double x, double) { return (x - mx) * (x - mx); }) / m0;
  const double vy = nested([&](double, double y) { return (y - my) * (y - my); }) / m0;
  return {{m0, mx, std::sqrt(vx)}, {m0, my, std::sqrt(vy)}};
}

// Shared by the subsampled_mh stat tests: estimates with standard errors and two-sample agreement checks.
/// Mean and sd of a chain with their Monte Carlo standard errors (as in stat_checks.hpp: se of the mean
/// sd / sqrt(ESS); se of the sd s sqrt((kurtosis - 1) / (4 ESS2)), ESS2 the ESS of squared deviations).
struct Estimate {
  double mean = 0, se_mean = 0, sd = 0, se_sd = 0, ess = 0;
};

inline Estimate estimate(std::span<const double> xs) {
  Estimate e;
  e.mean = mean(xs);
  e.sd = sample_sd(xs);
  e.ess = effective_sample_size(xs);
  std::vector<double> sq(xs.size());
  double m2 = 0, m4 = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    sq[i] = (xs[i] - e.mean) * (xs[i] - e.mean);
    m2 += sq[i] / static_cast<double>(xs.size());
    m4 += sq[i] * sq[i] / static_cast<double>(xs.size());
  }
  e.se_mean = e.sd / std::sqrt(e.ess);
  e.se_sd = e.sd * std::sqrt((m4 / (m2 * m2) - 1) / (4 * effective_sample_size(sq)));
  if (!(e.ess >= kMinCheckEss)) e.se_mean = e.se_sd = std::nan("");  // too few draws: every check fails
  return e;
}

/// |a - b| <= z sqrt(se_a^2 + se_b^2) + allowance (an exact value has se 0).
inline CheckResult evaluate_agree(std::string_view what, double a, double se_a, double b, double se_b,
                           double allowance = 0, double z = 4) {
  const double tol = z * std::hypot(se_a, se_b) + allowance;
  return {std::abs(a - b) <= tol, fmt::format("{}: {:.5f} vs {:.5f}: |difference| {:.5f}, allowed {:.5f} (4 x se "
                                              "{:.5f} + bias allowance {:.5f})",
                                              what, a, b, std::abs(a - b), tol, std::hypot(se_a, se_b), allowance)};
}

inline bool check_agree(std::string_view what, double a, double se_a, double b, double se_b, double allowance = 0,
                 std::source_location loc = std::source_location::current()) {
  return detail::record(evaluate_agree(what, a, se_a, b, se_b, allowance), loc);
}

}  // namespace vnt::test
