// binomial: conformance over a parameter table, the list gibbs enumerates and its bound, up to 2^53 trials, messages.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/binomial.hpp>

#include <tuple>
#include <vector>

#include "runtime/infer/gibbs.hpp"
#include "stdlib/support/counts.hpp"
#include "tests/support/dist_conformance.hpp"

namespace vnt::test {
namespace binomial_test {

constexpr double k2To53 = 9007199254740992.0;

// What a direct transcription of the pmf computes.
double naive_log_pmf(double k, double n, double p) {
  return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1) + k * std::log(p) +
         (n - k) * std::log1p(-p);
}

}  // namespace binomial_test

// A list longer than one gibbs transition scores would never be used.
static_assert(stdlib::kMaxListed == kMaxGibbsValues);

TEST_CASE("binomial conforms") {
  const Sp& sp = builtin_sp("binomial");
  for (auto [n, p] : {std::pair{0.0, 0.3}, {1.0, 0.5}, {10.0, 0.3}, {25.0, 0.97}, {40.0, 0.0}, {7.0, 1.0},
                      {200.0, 0.02}, {1000.0, 0.5}, {4095.0, 0.001}}) {
    boost::math::binomial_distribution<> ref(n, p);
    // check_discrete also compares the list enumerate gives with this one, value by value.
    check_discrete(sp, {num(n), num(p)}, count_range(0, static_cast<int>(n)), [&](double k) { return pdf(ref, k); });
  }
}

TEST_CASE("binomial lists 0 to n for gibbs up to n = 4095, and nothing beyond") {
  const Sp& sp = builtin_sp("binomial");
  auto listed = sp.enumerate(Call(sp, {num(4095), num(0.5)}).args());
  REQUIRE(listed.has_value());
  REQUIRE(listed->size() == 4096);
  for (size_t i = 0; i < listed->size(); ++i) CHECK(values_equal((*listed)[i], num(static_cast<double>(i))));
  CHECK(sp.enumerate(Call(sp, {num(2), num(0.5)}).args())->size() == 3);
  CHECK(sp.enumerate(Call(sp, {num(0), num(0.5)}).args())->size() == 1);
  // Not enumerable, rather than a list of 4097 (or 2^53 + 1) values that gibbs would refuse anyway.
  for (double n : {4096.0, 1e6, binomial_test::k2To53}) CHECK_FALSE(sp.enumerate(Call(sp, {num(n), num(0.5)}).args()));
  check_error([&] { sp.enumerate(Call(sp, {num(1e16), num(0.5)}).args()); }, ErrorKind::kDomain,
              "binomial: argument 1 (n) is 1e+16, but must be at most 9007199254740992");
}

TEST_CASE("binomial errors") {
  const Sp& sp = builtin_sp("binomial");
  check_invalid(sp, {num(-1), num(0.5)}, num(0), "binomial: argument 1 (n) is -1, but must be a non-negative integer");
  check_invalid(sp, {num(2.5), num(0.5)}, num(0),
                "binomial: argument 1 (n) is 2.5, but must be a non-negative integer");
  check_invalid(sp, {num(kInf), num(0.5)}, num(0),
                "binomial: argument 1 (n) is inf, but must be a non-negative integer");
  check_invalid(sp, {num(3), num(1.5)}, num(0), "binomial: argument 2 (p) is 1.5, but must be in [0, 1]");
  check_invalid(sp, {num(3), num(-0.25)}, num(0), "binomial: argument 2 (p) is -0.25, but must be in [0, 1]");
  // Past 2^53 not every count is a double.
  check_invalid(sp, {num(1e16), num(0.5)}, num(5e15),
                "binomial: argument 1 (n) is 1e+16, but must be at most 9007199254740992");
  check_invalid(sp, {num(binomial_test::k2To53 + 2), num(0.5)}, num(0),
                "binomial: argument 1 (n) is 9007199254740994, but must be at most 9007199254740992");
  check_malformed(sp, {num(3)}, num(0), ErrorKind::kArity, "binomial: expected 2 arguments, got 1");
  check_malformed(sp, {num(3), num(0.5), num(1)}, num(0), ErrorKind::kArity, "binomial: expected 2 arguments, got 3");
  check_malformed(sp, {make_string("n"), num(0.5)}, num(0), ErrorKind::kType,
                  "binomial: argument 1 (n) must be a number, got a string");
  check_malformed(sp, {num(3), make_list({})}, num(0), ErrorKind::kType,
                  "binomial: argument 2 (p) must be a number, got a list");
  Call call(sp, {num(10), num(0.3)});
  for (double x : {-1.0, 0.5, 9.999, 11.0, kInf, -kInf}) CHECK(call.log_density(num(x)) == -kInf);
  CHECK(call.log_density(make_list({})) == -kInf);
  CHECK(call.log_density(num(0)) == doctest::Approx(10 * std::log(0.7)));
  CHECK(call.log_density(num(10)) == doctest::Approx(10 * std::log(0.3)));
  // A certain outcome: the other counts are impossible, not NaN (0 log 0).
  CHECK(Call(sp, {num(5), num(0)}).log_density(num(0)) == 0);
  CHECK(Call(sp, {num(5), num(0)}).log_density(num(1)) == -kInf);
  CHECK(Call(sp, {num(5), num(1)}).log_density(num(5)) == 0);
  CHECK(Call(sp, {num(5), num(1)}).log_density(num(4)) == -kInf);
  CHECK(std::isnan(binomial_test::naive_log_pmf(0, 5, 0)));
}

// References from mpmath at 60 digits: loggamma(n+1) - loggamma(k+1) - loggamma(n-k+1) + k log(p) + (n-k) log1p(-p),
// p the double given.
TEST_CASE("binomial of up to 2^53 trials: log densities accurate where lgamma's rounding is tens of nats") {
  using binomial_test::k2To53;
  const Sp& sp = builtin_sp("binomial");
  const double n = k2To53;
  for (auto [k, p, ref] : {std::tuple{k2To53 / 2, 0.5, -18.59419163748327815967532},
                           {3 * std::pow(2.0, 50) + 12345, 0.375, -18.56192241301056359735181},
                           {9.0, 1e-15, -2.026809161924715862578779},
                           {1.0, 1e-300, -654.038727328536603781225},
                           {1.0, 1e-320, -700.0904403212968047518736},
                           {k2To53 - 3, 1 - std::pow(2.0, -53), -2.791759469228055056323629}}) {
    CAPTURE(k);
    CAPTURE(p);
    CHECK(Call(sp, {num(n), num(p)}).log_density(num(k)) == doctest::Approx(ref).epsilon(1e-12));
  }
  // At the mode the direct form is off by whole nats (each lgamma is 3e17, rounded to 64).
  CHECK(std::fabs(binomial_test::naive_log_pmf(k2To53 / 2, n, 0.5) - -18.59419163748327815967532) > 1);
  CHECK(Call(sp, {num(40), num(0.3)}).log_density(num(12)) ==
        doctest::Approx(-1.990890000281764224381801).epsilon(1e-14));
  CHECK(Call(sp, {num(n), num(0.5)}).log_density(num(n)) == doctest::Approx(-n * std::log(2.0)).epsilon(1e-15));
  CHECK(Call(sp, {num(n), num(1e-300)}).log_density(num(0)) == doctest::Approx(-n * 1e-300).epsilon(1e-15));
  // A subnormal p: np = 3.7e-310 has lost digits, log(n) + log(p) has not.
  CHECK(Call(sp, {num(3), num(1.23456789e-310)}).log_density(num(2)) ==
        doctest::Approx(-1426.0827033232089252).epsilon(1e-15));
}

TEST_CASE("binomial draws of many trials are exact integers with the binomial's mean and spread") {
  using binomial_test::k2To53;
  const Sp& sp = builtin_sp("binomial");
  Rng rng(kSeed);
  // Beyond 1e12 trials a draw is a sum of draws of 1e12 or fewer, where Boost's sampler is exact.
  for (auto [n, p, count] : {std::tuple{3e12 + 12345, 0.3, 2000}, {1e13 + 1, 1e-11, 2000}, {k2To53, 0.5, 100}}) {
    CAPTURE(n);
    const double mean = n * p, sd = std::sqrt(n * p * (1 - p));
    double sum = 0, sum2 = 0;
    for (int i = 0; i < count; ++i) {
      const double k = std::get<double>(Call(sp, {num(n), num(p)}).simulate(rng));
      REQUIRE(k == std::floor(k));
      REQUIRE((k >= 0 && k <= n));
      const double z = (k - mean) / sd;
      sum += z;
      sum2 += z * z;
    }
    const double m = sum / count;
    CHECK(std::fabs(m) < 4 / std::sqrt(double(count)));
    CHECK(std::sqrt(sum2 / count - m * m) == doctest::Approx(1).epsilon(4 / std::sqrt(2.0 * count)));
  }
  // Only the rarer outcome is counted: n - (a Poisson of mean about 1) trials fail.
  double failures = 0;
  for (int i = 0; i < 2000; ++i) {
    const double k = std::get<double>(Call(sp, {num(k2To53), num(1 - std::pow(2.0, -53))}).simulate(rng));
    REQUIRE((k <= k2To53 && k >= k2To53 - 20));
    failures += k2To53 - k;
  }
  CHECK(failures / 2000 == doctest::Approx(1).epsilon(0.1));
  for (int i = 0; i < 100; ++i) CHECK(std::get<double>(Call(sp, {num(k2To53), num(1e-300)}).simulate(rng)) == 0);
}

}  // namespace vnt::test
