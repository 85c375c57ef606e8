// Posterior checks for the statistical tests: each tolerance is a z-score (or p-value) computed
// from the effective sample size of the draws, so correlated chains get wider tolerances.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/mcmc_stats.hpp"

namespace vnt::test {

/// Below this ESS the normal approximations behind the tolerances (and the ESS estimate itself) are
/// unreliable, so a check fails rather than pass vacuously: run longer or thin less.
inline constexpr double kMinCheckEss = 20.0;

/// Outcome of a check: whether it passed and a message with the statistic, its tolerance and the ESS.
struct CheckResult {
  bool ok = false;
  std::string message;
};

namespace detail {

// The ESS behind a tolerance. A constant chain has ESS NaN (see mcmc_stats.hpp); then n is used,
// the tightest choice, so a stuck sampler fails unless the target really is a point mass.
inline double ess_or_n(std::span<const double> xs) {
  const double ess = effective_sample_size(xs);
  return std::isnan(ess) ? static_cast<double>(xs.size()) : ess;
}

// Records one check at the caller's position (doctest's CHECK would point into this header).
inline bool record(const CheckResult& r, const std::source_location& loc) {
  if (r.ok) {
    CHECK_MESSAGE(r.ok, r.message);
  } else {
    ADD_FAIL_CHECK_AT(loc.file_name(), static_cast<int>(loc.line()), r.message);
  }
  return r.ok;
}

// diff / se, where an exact match is 0 even with se = 0 (a point-mass target).
inline double z_score(double diff, double se) { return diff == 0.0 ? 0.0 : diff / se; }

inline bool too_few(double ess) { return !(ess >= kMinCheckEss); }

inline CheckResult too_few_result(double ess, std::string_view check) {
  return {false, fmt::format("{}: ESS {:.1f} is below {} (too few effective draws to check)", check, ess,
                             kMinCheckEss)};
}

}  // namespace detail

/// Mean of the draws against a posterior with known mean and sd. By the Markov-chain CLT the sample
/// mean is approximately N(mu, sd^2 / ESS), so |mean - mu| <= z sd / sqrt(ESS); z = 4 fails a correct
/// sampler with probability about 6e-5 (two-sided).
inline CheckResult evaluate_mean(std::span<const double> draws, double expected_mean, double expected_sd,
                                 double z = 4.0) {
  const double ess = detail::ess_or_n(draws);
  if (detail::too_few(ess)) return detail::too_few_result(ess, "check_mean");
  const double m = mean(draws);
  const double score = detail::z_score(m - expected_mean, expected_sd / std::sqrt(ess));
  return {std::abs(score) <= z,
          fmt::format("check_mean: mean {:.6g}, expected {:.6g} (sd {:.4g}, ESS {:.1f}): "
                      "z-score {:.3f}, allowed {}",
                      m, expected_mean, expected_sd, ess, score, z)};
}

inline bool check_mean(std::span<const double> draws, double expected_mean, double expected_sd,
                       double z = 4.0, std::source_location loc = std::source_location::current()) {
  return detail::record(evaluate_mean(draws, expected_mean, expected_sd, z), loc);
}

/// Sample sd against the posterior sd. s^2 averages (x - mu)^2, whose variance is (kappa - 1) sd^4
/// with kappa the kurtosis, so Var(s^2) ~ (kappa - 1) sd^4 / ESS2 where ESS2 is the ESS of the
/// squared deviations; by the delta method Var(s) = Var(s^2) / (4 sd^2), i.e.
/// se(s) = sd sqrt((kappa - 1) / (4 ESS2)), which is sd / sqrt(2 ESS2) for a normal (kappa = 3).
/// kappa is estimated from the draws so that skewed or heavy-tailed posteriors get wider tolerances.
inline CheckResult evaluate_sd(std::span<const double> draws, double expected_sd, double z = 4.0) {
  const double m = mean(draws);
  std::vector<double> sq(draws.size());
  double m2 = 0.0, m4 = 0.0;
  for (size_t i = 0; i < draws.size(); ++i) {
    sq[i] = (draws[i] - m) * (draws[i] - m);
    m2 += sq[i];
    m4 += sq[i] * sq[i];
  }
  const double ess = detail::ess_or_n(sq);
  if (detail::too_few(ess)) return detail::too_few_result(ess, "check_sd");
  m2 /= static_cast<double>(draws.size());
  m4 /= static_cast<double>(draws.size());
  const double kurtosis = m2 > 0.0 ? m4 / (m2 * m2) : 3.0;
  const double s = sample_sd(draws);
  const double score =
      detail::z_score(s - expected_sd, expected_sd * std::sqrt((kurtosis - 1.0) / (4.0 * ess)));
  return {std::abs(score) <= z, fmt::format("check_sd: sd {:.6g}, expected {:.6g} (kurtosis {:.3g}, ESS of "
                                            "squares {:.1f}): z-score {:.3f}, allowed {}",
                                            s, expected_sd, kurtosis, ess, score, z)};
}

inline bool check_sd(std::span<const double> draws, double expected_sd, double z = 4.0,
                     std::source_location loc = std::source_location::current()) {
  return detail::record(evaluate_sd(draws, expected_sd, z), loc);
}

/// Kolmogorov-Smirnov test of the draws against `cdf` (callable double -> double). D = sup |F_n - F|;
/// for n iid draws sqrt(n) D is asymptotically Kolmogorov-distributed, P(K > t) =
/// 2 sum_k (-1)^(k-1) exp(-2 k^2 t^2), evaluated at t = (sqrt(N) + 0.12 + 0.11 / sqrt(N)) D (Stephens'
/// small-sample correction) with N = the ESS in place of n: the smaller of the ESS of the draws and
/// of u = F(x) (each point of F_n averages indicators, and u is their common monotone summary).
/// Fails if that p-value is below alpha (1e-4 by default, matching z = 4 of the other checks).
template <class Cdf>
CheckResult evaluate_ks(std::span<const double> draws, Cdf&& cdf, double alpha = 1e-4) {
  std::vector<double> u(draws.size());
  for (size_t i = 0; i < draws.size(); ++i) u[i] = cdf(draws[i]);
  const double ess = std::min(detail::ess_or_n(draws), detail::ess_or_n(u));
  if (detail::too_few(ess)) return detail::too_few_result(ess, "check_ks");
  const double n = static_cast<double>(u.size());
  double d = 1.0;  // stays 1 if the cdf returned NaN somewhere
  if (std::none_of(u.begin(), u.end(), [](double v) { return std::isnan(v); })) {
    std::sort(u.begin(), u.end());
    d = 0.0;
    for (size_t i = 0; i < u.size(); ++i) {
      const double k = static_cast<double>(i);
      d = std::max({d, (k + 1.0) / n - u[i], u[i] - k / n});
    }
  }
  const double t = (std::sqrt(ess) + 0.12 + 0.11 / std::sqrt(ess)) * d;
  double p = 1.0;
  if (t > 0.2) {  // below, the series converges slowly and p is 1 to double precision
    p = 0.0;
    for (int k = 1; k <= 100; ++k) p += (k % 2 == 1 ? 2.0 : -2.0) * std::exp(-2.0 * k * k * t * t);
    p = std::clamp(p, 0.0, 1.0);
  }
  return {p >= alpha, fmt::format("check_ks: D {:.4g} with ESS {:.1f} (n {}): p-value {:.3g}, allowed >= {}",
                                  d, ess, u.size(), p, alpha)};
}

template <class Cdf>
bool check_ks(std::span<const double> draws, Cdf&& cdf, double alpha = 1e-4,
              std::source_location loc = std::source_location::current()) {
  return detail::record(evaluate_ks(draws, std::forward<Cdf>(cdf), alpha), loc);
}

/// Frequency of a binary event (draws are 0/1 indicators) against its probability p. p-hat has
/// variance p (1 - p) / ESS; the hypothesised p is used rather than p-hat so that p-hat = 0 or 1
/// does not shrink the tolerance to nothing. Normal approximation: meaningful when ESS p (1-p) >~ 10.
inline CheckResult evaluate_probability(std::span<const double> indicators, double p, double z = 4.0) {
  const double ess = detail::ess_or_n(indicators);
  if (detail::too_few(ess)) return detail::too_few_result(ess, "check_probability");
  const double p_hat = mean(indicators);
  const double tol = z * std::sqrt(p * (1.0 - p) / ess);
  return {std::abs(p_hat - p) <= tol, fmt::format("check_probability: frequency {:.6g}, expected {:.6g} (ESS "
                                                  "{:.1f}): |difference| {:.4g}, allowed {:.4g} (z = {})",
                                                  p_hat, p, ess, std::abs(p_hat - p), tol, z)};
}

inline bool check_probability(std::span<const double> indicators, double p, double z = 4.0,
                              std::source_location loc = std::source_location::current()) {
  return detail::record(evaluate_probability(indicators, p, z), loc);
}

}  // namespace vnt::test
