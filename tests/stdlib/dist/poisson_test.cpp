// poisson: conformance over a parameter table (small and large rates), non-integers, messages.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/poisson.hpp>

#include "tests/support/dist_conformance.hpp"

namespace vnt::test {

TEST_CASE("poisson conforms") {
  const Sp& sp = builtin_sp("poisson");
  for (double rate : {0.05, 1.0, 4.5, 60.0}) {
    boost::math::poisson_distribution<> ref(rate);
    int hi = static_cast<int>(rate + 12 * std::sqrt(rate) + 20);
    check_discrete(sp, {num(rate)}, count_range(0, hi), [&](double k) { return pdf(ref, k); });
  }
}

TEST_CASE("poisson at the largest rate draws integer counts near the rate") {
  const Sp& sp = builtin_sp("poisson");
  const double rate = 1e12;
  for (const Value& v : draws(sp, {num(rate)})) {
    double k = std::get<double>(v);
    CHECK(k == std::floor(k));
    CHECK(std::fabs(k - rate) < 6 * std::sqrt(rate));
  }
}

TEST_CASE("poisson errors") {
  const Sp& sp = builtin_sp("poisson");
  check_invalid(sp, {num(0)}, num(0), "poisson: argument 1 (rate) is 0, but must be positive");
  check_invalid(sp, {num(-0.5)}, num(0), "poisson: argument 1 (rate) is -0.5, but must be positive");
  // Beyond what the sampler computes exactly (1e300 overflowed to -9.2e18).
  check_invalid(sp, {num(1e300)}, num(0), "poisson: argument 1 (rate) is 1e+300, but must be at most 1000000000000");
  check_invalid(sp, {num(1.5e12)}, num(1.5e12),
                "poisson: argument 1 (rate) is 1500000000000, but must be at most 1000000000000");
  check_malformed(sp, {}, num(0), ErrorKind::kArity, "poisson: expected 1 argument, got 0");
  check_malformed(sp, {make_list({})}, num(0), ErrorKind::kType,
                  "poisson: argument 1 (rate) must be a number, got a list");
  Call call(sp, {num(3)});
  for (double x : {-1.0, 0.5, 2.999, kInf}) CHECK(call.log_density(num(x)) == -kInf);
  CHECK(call.log_density(num(0)) == doctest::Approx(-3.0));
  CHECK_FALSE(sp.enumerate(call.args()).has_value());
}

// x log(rate) - lgamma(x + 1) was inf - inf for a count above about 6e306.
TEST_CASE("poisson at huge counts: a log density, not NaN") {
  const Sp& sp = builtin_sp("poisson");
  CHECK(Call(sp, {num(5)}).log_density(num(1e308)) == -kInf);
  CHECK(Call(sp, {num(1e12)}).log_density(num(1e307)) == -kInf);
  for (auto [rate, k] : {std::pair{1e7, 1e7}, {1e7, 1.001e7}, {2.5e6, 2.49e6}})
    CHECK(Call(sp, {num(rate)}).log_density(num(k)) ==
          doctest::Approx(std::log(boost::math::pdf(boost::math::poisson_distribution<>(rate), k))).epsilon(1e-9));
}

// A count of a million or more far above the rate: 1 + u = rate / count was lost to rounding in x log1pmx(u), so
// rates 1e-6 and 1.00001e-6 scored 1e6 alike, and (poisson 1e-11) gave 1e6 probability zero.
TEST_CASE("poisson at huge counts far above the rate") {
  const Sp& sp = builtin_sp("poisson");
  auto direct = [](double rate, double k) { return k * std::log(rate) - rate - std::lgamma(k + 1); };
  for (auto [rate, k] : {std::pair{1e-6, 1e6}, {1e-11, 1e6}, {1e-3, 3e6}, {1e-300, 1e6}})
    CHECK(Call(sp, {num(rate)}).log_density(num(k)) == doctest::Approx(direct(rate, k)).epsilon(1e-12));
  const double diff = Call(sp, {num(1e-6)}).log_density(num(1e6)) - Call(sp, {num(1.00001e-6)}).log_density(num(1e6));
  CHECK(diff == doctest::Approx(-1e6 * std::log1p(1e-5) + 1e-11).epsilon(1e-6));
}
}  // namespace vnt::test
