// The cached critical-value rule against the Student-t CDF rule it replaces, including ties.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/infer/austerity/t_quantile_cache.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>

#include "runtime/core/rng.hpp"

namespace vnt::t_quantile_cache_tests {
namespace {

// The rule as the design note states it: q = T_df(t); reject if q < eps, accept if q > 1 - eps.
TestOutcome classify_by_cdf(double t, double epsilon, size_t df) {
  const double q = boost::math::cdf(boost::math::students_t(static_cast<double>(df)), t);
  if (q < epsilon) return TestOutcome::kReject;
  if (q > 1.0 - epsilon) return TestOutcome::kAccept;
  return TestOutcome::kContinue;
}

TEST_CASE("TQuantileCache: critical values") {
  CHECK(TQuantileCache::compute(0.1, 24) == doctest::Approx(1.317836).epsilon(1e-6));
  CHECK(TQuantileCache::compute(0.05, 1) == doctest::Approx(6.313752).epsilon(1e-6));
  CHECK(TQuantileCache::compute(0.5, 7) == doctest::Approx(0.0).scale(1.0));
  CHECK(TQuantileCache::compute(0.0, 3) == std::numeric_limits<double>::infinity());
  CHECK(TQuantileCache::compute(1e-300, 10) > 1e20);  // upper-tail quantile: no rounding of 1 - eps to 1
  // A subnormal eps at one degree of freedom: the quantile overflows (an internal error once), nothing decides.
  CHECK(TQuantileCache::compute(1e-310, 1) == std::numeric_limits<double>::infinity());
  CHECK(TQuantileCache::compute(5e-324, 1) == std::numeric_limits<double>::infinity());
  CHECK(TQuantileCache::floor(5e-324) > 30);
  TQuantileCache cache(0.1, 2);
  CHECK(cache.critical(3) == TQuantileCache::compute(0.1, 5));
  CHECK(cache.critical(9) == TQuantileCache::compute(0.1, 17));
  CHECK(cache.critical(3) == TQuantileCache::compute(0.1, 5));  // memoised, out of order
  cache.bind(0.2, 2);
  CHECK(cache.critical(3) == TQuantileCache::compute(0.2, 5));
  cache.bind(0.2, 5);
  CHECK(cache.critical(1) == TQuantileCache::compute(0.2, 4));
  CHECK(cache.classify(1e300, 1) == TestOutcome::kAccept);
  cache.bind(0.0, 5);
  CHECK(cache.classify(1e300, 1) == TestOutcome::kContinue);  // eps = 0 never decides
  CHECK(cache.classify(-1e300, 7) == TestOutcome::kContinue);
}

TEST_CASE("TQuantileCache: a floor below every critical value spares computing them for small statistics") {
  for (double eps : {1e-9, 1e-3, 0.01, 0.1, 0.3, 0.5}) {
    CAPTURE(eps);
    const double floor = TQuantileCache::floor(eps);
    for (double df : {1.0, 2.0, 9.0, 99.0, 1e3, 1e5, 1e7, 1e9, 4e9}) {
      CAPTURE(df);
      const double c = TQuantileCache::compute(eps, static_cast<size_t>(df));
      CHECK(floor <= c);
      if (df >= 1e7) CHECK(c - floor < 1e-6 * std::max(1.0, c));  // and close to them for large df
    }
  }
  CHECK(TQuantileCache::floor(0.7) == -std::numeric_limits<double>::infinity());  // quantiles below the mean
  CHECK(TQuantileCache::floor(0.0) == std::numeric_limits<double>::infinity());
  for (ErrorSpending spending : {ErrorSpending::kPerTest, ErrorSpending::kPerDecision}) {
    TQuantileCache cache(0.01, 100, spending);
    const double floor = TQuantileCache::floor(cache.epsilon_at(1));
    for (size_t k = 1; k <= 5000; ++k) CHECK(cache.classify(k % 2 ? floor : -floor, k) == TestOutcome::kContinue);
    CHECK(cache.filled() == 0);
    for (size_t k : {size_t{1}, size_t{7}, size_t{300}, size_t{5000}}) CHECK(floor <= cache.critical(k));
    CHECK(cache.filled() == 4);
    CHECK(cache.classify(100.0, 2) == TestOutcome::kAccept);
    CHECK(cache.filled() == 5);
    cache.bind(0.02, 100, spending);
    CHECK(cache.filled() == 0);
  }
}

TEST_CASE("TQuantileCache: ties continue") {
  for (double eps : {0.01, 0.05, 0.1, 0.25, 0.4}) {
    for (size_t k : {size_t{1}, size_t{2}, size_t{5}, size_t{40}}) {
      TQuantileCache cache(eps, 3);
      const double c = cache.critical(k);
      const size_t df = 3 * k - 1;
      CAPTURE(eps);
      CAPTURE(k);
      CHECK(cache.classify(c, k) == TestOutcome::kContinue);
      CHECK(cache.classify(-c, k) == TestOutcome::kContinue);
      CHECK(cache.classify(std::nextafter(c, 1e300), k) == TestOutcome::kAccept);
      CHECK(cache.classify(std::nextafter(-c, -1e300), k) == TestOutcome::kReject);
      CHECK(cache.classify(std::nextafter(c, 0.0), k) == TestOutcome::kContinue);
      // At t = c the CDF is 1 - eps to rounding: a tie, which the strict rule resolves as "continue".
      const boost::math::students_t dist(static_cast<double>(df));
      CHECK(std::abs(boost::math::cdf(dist, c) - (1.0 - eps)) < 1e-13);
      CHECK(std::abs(boost::math::cdf(dist, -c) - eps) < 1e-13);
    }
  }
}

TEST_CASE("TQuantileCache: the cached rule decides as the CDF rule on random inputs") {
  Rng rng(2024);
  size_t compared = 0, decided = 0, mismatches = 0;
  for (int config = 0; config < 150; ++config) {
    const double eps = (config % 10 == 0) ? 0.5 + 0.3 * rng.uniform() : 0.5 * std::pow(10.0, -4.0 * rng.uniform());
    const size_t m = 1 + rng.below(100);
    TQuantileCache cache(eps, m);
    for (int j = 0; j < 40; ++j) {
      const size_t k = (m == 1 ? 2 : 1) + rng.below(60);
      const size_t df = k * m - 1;
      const double c = std::isfinite(cache.critical(k)) ? cache.critical(k) : 10.0;
      for (int r = 0; r < 5; ++r) {
        // Half near a threshold (within a few percent), half spread over [-3c, 3c].
        const double sign = rng.uniform() < 0.5 ? -1.0 : 1.0;
        const double t = (r % 2 == 0) ? sign * c * (1.0 + 0.03 * rng.normal())
                                      : 3.0 * std::abs(c) * (2.0 * rng.uniform() - 1.0);
        const TestOutcome cached = cache.classify(t, k);
        const TestOutcome by_cdf = classify_by_cdf(t, eps, df);
        ++compared;
        if (cached != TestOutcome::kContinue) ++decided;
        if (cached != by_cdf) {
          ++mismatches;
          CAPTURE(eps);
          CAPTURE(df);
          CAPTURE(t);
          CHECK(cached == by_cdf);
        }
      }
    }
  }
  MESSAGE("compared " << compared << " decisions (" << decided << " accept/reject), " << mismatches
                      << " mismatches");
  CHECK(mismatches == 0);
  CHECK(decided > compared / 4);
}

}  // namespace
}  // namespace vnt::t_quantile_cache_tests
