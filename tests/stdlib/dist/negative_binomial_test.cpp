// negative_binomial: conformance over a parameter table, the bounds on p and the mean, messages, huge and tiny r.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/negative_binomial.hpp>

#include <tuple>

#include "tests/support/dist_conformance.hpp"

namespace vnt::test {
namespace negative_binomial_test {

// What a direct transcription of the pmf computes.
double naive_log_pmf(double k, double r, double p) {
  return std::lgamma(k + r) - std::lgamma(r) - std::lgamma(k + 1) + r * std::log(p) + k * std::log(1 - p);
}

/// Standardized draws of negative_binomial(r, p): their mean (about 0) and sd (about 1).
std::pair<double, double> standardized_moments(const Sp& sp, double r, double p, int count, Rng& rng) {
  const double mean = r * (1 - p) / p, sd = std::sqrt(mean / p);
  double sum = 0, sum2 = 0;
  for (int i = 0; i < count; ++i) {
    const double k = std::get<double>(Call(sp, {num(r), num(p)}).simulate(rng));
    REQUIRE(k == std::floor(k));
    REQUIRE((k >= 0 && k <= 9007199254740992.0));
    sum += (k - mean) / sd;
    sum2 += (k - mean) / sd * (k - mean) / sd;
  }
  const double m = sum / count;
  return {m, std::sqrt(sum2 / count - m * m)};
}

}  // namespace negative_binomial_test

TEST_CASE("negative_binomial conforms") {
  const Sp& sp = builtin_sp("negative_binomial");
  for (auto [r, p] : {std::pair{1.0, 0.5}, {0.3, 0.4}, {2.5, 0.7}, {10.0, 0.2}, {50.0, 0.9}, {3.0, 1.0}}) {
    boost::math::negative_binomial_distribution<> ref(r, p);
    const int hi = p == 1 ? 0 : static_cast<int>(quantile(complement(ref, 1e-12)));
    check_discrete(sp, {num(r), num(p)}, count_range(0, hi), [&](double k) { return pdf(ref, k); });
  }
  // r = 1 is geometric.
  for (double k : {0.0, 1.0, 7.0, 40.0})
    CHECK(Call(sp, {num(1), num(0.3)}).log_density(num(k)) ==
          doctest::Approx(builtin_sp("geometric").log_density(num(k), Call(sp, {num(0.3)}).args())));
}

TEST_CASE("negative_binomial errors") {
  const Sp& sp = builtin_sp("negative_binomial");
  check_invalid(sp, {num(0), num(0.5)}, num(0), "negative_binomial: argument 1 (r) is 0, but must be positive");
  check_invalid(sp, {num(kInf), num(0.5)}, num(0), "negative_binomial: argument 1 (r) is inf, but must be finite");
  check_invalid(sp, {num(2), num(1.5)}, num(0), "negative_binomial: argument 2 (p) is 1.5, but must be in [0, 1]");
  check_invalid(sp, {num(2), num(0)}, num(0), "negative_binomial: argument 2 (p) is 0, but must be at least 1e-12");
  check_invalid(sp, {num(1e-3), num(1e-13)}, num(0),
                "negative_binomial: argument 2 (p) is 1e-13, but must be at least 1e-12");
  // A mean beyond poisson's largest rate; one that overflows.
  check_invalid(sp, {num(2e12), num(0.5)}, num(2e12),
                "negative_binomial: the mean r (1 - p) / p is 2000000000000 (r = 2000000000000, p = 0.5), but must be "
                "at most 1000000000000");
  check_invalid(sp, {num(1e300), num(1e-10)}, num(0),
                "negative_binomial: the mean r (1 - p) / p is inf (r = 1e+300, p = 1e-10), but must be at most "
                "1000000000000");
  check_malformed(sp, {num(2)}, num(0), ErrorKind::kArity, "negative_binomial: expected 2 arguments, got 1");
  check_malformed(sp, {num(2), make_string("p")}, num(0), ErrorKind::kType,
                  "negative_binomial: argument 2 (p) must be a number, got a string");
  Call call(sp, {num(2), num(0.5)});
  for (double x : {-1.0, 0.5, 3.25, kInf, 9007199254740994.0}) CHECK(call.log_density(num(x)) == -kInf);
  CHECK(call.log_density(num(0)) == doctest::Approx(2 * std::log(0.5)));
  CHECK(call.log_density(num(3)) == doctest::Approx(std::log(4 * 0.25 * 0.125)));
  CHECK_FALSE(sp.enumerate(call.args()).has_value());
  // At the largest mean, and just past it.
  CHECK(std::isfinite(Call(sp, {num(1e12), num(0.5)}).log_density(num(1e12))));
  CHECK(Call(sp, {num(1.000001e12), num(0.5)}).log_density(num(1e12)) == -kInf);
}

// References from mpmath at 60 digits: loggamma(k+r) - loggamma(r) - loggamma(k+1) + r log(p) + k log1p(-p), r and p
// the doubles given.
TEST_CASE("negative_binomial with huge and tiny r: log densities where lgamma differences cancel or are NaN") {
  using negative_binomial_test::naive_log_pmf;
  const Sp& sp = builtin_sp("negative_binomial");
  const double p20 = 1 - std::pow(2.0, -20);  // with r = 1e15, a mean of 9.5e8
  for (auto [k, r, p, ref] : {std::tuple{953675000.0, 1e15, p20, -11.25688251560838834241375},
                              {954e6, 1e15, p20, -66.55160644746560004065767},
                              {9e8, 1e15, p20, -1539661.201028355845197476},
                              {1e12, 1e12, 0.5, -15.08102268144904450059689},
                              {1e12, 0.5, 1e-12, -29.20338605885387328523094},
                              {5e11, 1.0, 1e-12, -28.13102111592879821827257},
                              {3.0, 1e-300, 0.5, -693.9535817285616507999853}}) {
    CAPTURE(k);
    CAPTURE(r);
    CAPTURE(p);
    CHECK(Call(sp, {num(r), num(p)}).log_density(num(k)) == doctest::Approx(ref).epsilon(1e-12));
  }
  // lgamma(k + r) - lgamma(r) is 3.4e16 - 3.4e16, rounded to 4: the direct form is off by a nat near the mode.
  CHECK(std::fabs(naive_log_pmf(953675000.0, 1e15, p20) - -11.25688251560838834241375) > 1);
  // r = 1e300 is valid only at p = 1, a point mass at 0, where the direct form is inf - inf or 0 log 0.
  CHECK(Call(sp, {num(1e300), num(1)}).log_density(num(0)) == 0);
  CHECK(Call(sp, {num(1.7e308), num(1)}).log_density(num(0)) == 0);
  CHECK(Call(sp, {num(1e300), num(1)}).log_density(num(1)) == -kInf);
  CHECK(std::isnan(naive_log_pmf(0, 1e300, 1)));
  CHECK(std::isnan(naive_log_pmf(1, 1.7e308, 1 - 1e-10)));
  // Invalid parameters that large are probability zero, not NaN.
  CHECK(Call(sp, {num(1.7e308), num(1 - 1e-10)}).log_density(num(1)) == -kInf);
}

TEST_CASE("negative_binomial draws near the bounds are exact integers with the right mean and spread") {
  const Sp& sp = builtin_sp("negative_binomial");
  Rng rng(kSeed);
  // Poisson rates past 1e12 (summed draws), the largest mean, Wilson-Hilferty gammas, a tiny r.
  for (auto [r, p] : {std::pair{1.0, 1e-12}, {1e12, 0.5}, {1e15, 1 - std::pow(2.0, -10)}, {1e-3, 1e-9}}) {
    CAPTURE(r);
    CAPTURE(p);
    constexpr int kCount = 2000;
    const auto [m, sd] = negative_binomial_test::standardized_moments(sp, r, p, kCount, rng);
    CHECK(std::fabs(m) < 4 / std::sqrt(double(kCount)));
    CHECK(sd == doctest::Approx(1).epsilon(r < 1 ? 0.5 : 0.1));  // r = 1e-3: the draws are mostly 0, skewed
  }
  for (int i = 0; i < 100; ++i) CHECK(values_equal(Call(sp, {num(1e300), num(1)}).simulate(rng), num(0)));
}

}  // namespace vnt::test
