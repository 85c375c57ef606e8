// Shared pieces of the count distributions: the limits of their supports, the lists gibbs enumerates, log densities
// in Loader's saddle-point form, and samplers that stay exact past what Boost's compute exactly.
//
// Loader's form ("Fast and accurate computation of binomial probabilities", 2000): log Γ(z) is z log z - z plus a
// small rest, and the z log z parts of a pmf sum to minus the deviances bd0(x, m) = x log(x / m) + m - x of each count
// from its expected value m. Those are non-negative and computed without cancellation, where lgamma differences of
// counts near 2^53 or parameters near 1e308 lose every digit (or give inf - inf).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/random/binomial_distribution.hpp>
#include <boost/random/poisson_distribution.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/core/rng.hpp"
#include "runtime/value/value.hpp"
#include "stdlib/support/large_gamma.hpp"
#include "stdlib/support/log_2pi.hpp"

namespace vnt::stdlib {

/// 2^53: every integer up to it is a double. No count beyond it is in a support, as its neighbours are not doubles.
inline constexpr double kMaxCount = 9007199254740992.0;
/// The most values an enumerate lists: gibbs scores at most kMaxGibbsValues joint values (runtime/infer/gibbs.hpp,
/// 4096; tests/stdlib/dist/binomial_test.cpp checks they agree), so a longer list could never be used. Beyond it a
/// distribution is not enumerable, and gibbs says so, without a list of 2^53 values being allocated first.
inline constexpr size_t kMaxListed = 4096;
/// Boost's Poisson and binomial samplers accept a draw by a test whose rounding error grows like the rate or the
/// number of trials times 2^-53 (stdlib/dist/poisson.cpp): up to this size it is about 1e-4 nat. A larger one is
/// drawn as a sum of draws of at most this size, which has the same distribution.
inline constexpr double kMaxExactTrials = 1e12;

/// A number of trials n (argument 1) at most kMaxCount, or a kDomain error: above 2^53 not every count of 0 … n is
/// a double, and draws could not be exact.
inline void check_trials(std::string_view name, double n) {
  if (n > kMaxCount)
    raise(ErrorKind::kDomain, "{}: argument 1 (n) is {}, but must be at most {}", name, to_string(Value(n)),
          to_string(Value(kMaxCount)));
}

/// Whether x is an integer in [0, hi].
inline bool is_count(double x, double hi) { return x >= 0 && x <= hi && x == std::floor(x); }

/// The integers lo, lo + 1, ..., hi - 1 (exact doubles), or nullopt if there are more than kMaxListed.
inline std::optional<std::vector<double>> listed_range(double lo, double hi) {
  if (!(hi - lo <= static_cast<double>(kMaxListed))) return std::nullopt;
  std::vector<double> out;
  out.reserve(static_cast<size_t>(std::max(hi - lo, 0.0)));
  for (double x = lo; x < hi; ++x) out.push_back(x);
  return out;
}

/// a b - c d rounded once (Kahan's algorithm), for finite products: the difference of a count from its mean.
inline double cross_difference(double a, double b, double c, double d) {
  const double cd = c * d;
  const double err = std::fma(-c, d, cd);  // cd - c d, exactly
  return std::fma(a, b, -cd) + err;
}

/// Loader's bd0(x, m) = x log(x / m) + m - x >= 0 for x >= 0 and m >= 0, given d = x - m computed accurately by the
/// caller (m itself may have rounded). Near x = m it is a series in d / (x + m), which nothing cancels. A caller
/// whose m is a product that can underflow (tiny parameters) gives log(m) from the logs of its factors: log(x / m)
/// is then taken from it where m is subnormal or 0.
inline double bd0(double x, double m, double d, double log_m = std::numeric_limits<double>::quiet_NaN()) {
  if (x == 0) return m;
  const double half_sum = 0.5 * x + 0.5 * m;  // (x + m) / 2, which cannot overflow
  if (std::fabs(d) < 0.2 * half_sum) {
    double v = 0.5 * d / half_sum;
    double sum = d * v;
    double ej = x * v * 2;  // x v is at most |d|; 2 x may overflow
    v *= v;
    for (int j = 1; j < 100; ++j) {  // v^2 < 0.01: 8 terms at most
      ej *= v;
      const double next = sum + ej / (2 * j + 1);
      if (next == sum) return sum;
      sum = next;
    }
    return sum;
  }
  constexpr double kMinNormal = std::numeric_limits<double>::min();
  const double ratio = x / m;
  if (m >= kMinNormal && ratio >= kMinNormal && std::isfinite(ratio)) return x * std::log(ratio) - d;
  // inf for m = 0 without log_m (a count where none is expected)
  return x * (std::log(x) - (std::isnan(log_m) ? std::log(m) : log_m)) - d;
}

/// lgamma(x) - (x log x - x) for x > 0: the rest of log Γ(x) beside its z log z part, at most about 745 in size.
inline double log_gamma_rest(double x) {
  if (x >= 10) return kHalfLog2Pi - 0.5 * std::log(x) + stirling_correction(x);
  return std::lgamma(x) - x * std::log(x) + x;
}

/// lgamma(x + 1) - (x log x - x) for x >= 0 (0 at 0): the same for x!.
inline double log_factorial_rest(double x) {
  if (x == 0) return 0;
  if (x >= 10) return kHalfLog2Pi + 0.5 * std::log(x) + stirling_correction(x);
  return std::lgamma(x + 1) - x * std::log(x) + x;
}

/// log_gamma_rest(x + t) - log_gamma_rest(x) for x > 0 and t >= 0; 0 for x = inf (a sum of parameters that
/// overflowed), where the difference is below t / 1e308.
inline double log_gamma_rest_diff(double x, double t) {
  if (x >= 10) return -0.5 * std::log1p(t / x) + stirling_correction(x + t) - stirling_correction(x);
  return log_gamma_rest(x + t) - log_gamma_rest(x);
}

/// A Poisson draw of the rate: a sum of draws of rates up to kMaxExactTrials (the sum of independent Poisson counts
/// is Poisson of the summed rate), exact where Boost's is. kMaxCount, the end of the support, for a rate beyond it
/// (callers bound their parameters so that such a rate has a negligible probability).
inline double poisson_count(Rng& rng, double rate) {
  if (!(rate > 0)) return 0;
  if (!(rate < kMaxCount)) return kMaxCount;
  const double parts = std::ceil(rate / kMaxExactTrials);  // at most 9008
  boost::random::poisson_distribution<int64_t, double> draw(rate / parts);
  double total = 0;
  for (double i = 0; i < parts; ++i) total += static_cast<double>(draw(rng.engine()));
  return std::min(total, kMaxCount);
}

/// A binomial draw of n trials (an integer up to kMaxCount) of probability p, with q = 1 - p as accurately as the
/// caller has it: the rarer outcome is counted (Boost computes 1 - p itself, which loses the digits of a q near 0),
/// in draws of at most kMaxExactTrials trials (at most 9008 of them) whose counts add up.
inline double binomial_count(Rng& rng, double n, double p, double q) {
  if (p > q) return n - binomial_count(rng, n, q, p);
  if (p == 0 || n == 0) return 0;
  const double full = std::floor(n / kMaxExactTrials);
  const double rest = n - full * kMaxExactTrials;  // exact: integers below 2^53
  double total = 0;
  if (full > 0) {
    boost::random::binomial_distribution<int64_t, double> draw(static_cast<int64_t>(kMaxExactTrials), p);
    for (double i = 0; i < full; ++i) total += static_cast<double>(draw(rng.engine()));
  }
  if (rest > 0)
    total += static_cast<double>(
        boost::random::binomial_distribution<int64_t, double>(static_cast<int64_t>(rest), p)(rng.engine()));
  return total;
}

}  // namespace vnt::stdlib
