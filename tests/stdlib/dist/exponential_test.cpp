// exponential: conformance over a parameter table, domain/arity/type messages, extreme rates.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/exponential.hpp>

#include <cmath>
#include <limits>
#include <tuple>

#include "tests/support/dist_conformance.hpp"

namespace vnt::test {

TEST_CASE("exponential conforms") {
  const Sp& sp = builtin_sp("exponential");
  for (double rate : {1.0, 0.5, 4.0, 0.01, 250.0})
    check_continuous(sp, {num(rate)}, boost::math::exponential_distribution<>(rate), 0, kInf);
}

TEST_CASE("exponential errors") {
  const Sp& sp = builtin_sp("exponential");
  check_invalid(sp, {num(0)}, num(1), "exponential: argument 1 (rate) is 0, but must be positive");
  check_invalid(sp, {num(-2.5)}, num(1), "exponential: argument 1 (rate) is -2.5, but must be positive");
  check_invalid(sp, {num(kInf)}, num(1), "exponential: argument 1 (rate) is inf, but must be finite");
  check_malformed(sp, {}, num(1), ErrorKind::kArity, "exponential: expected 1 argument, got 0");
  check_malformed(sp, {num(1), num(2)}, num(1), ErrorKind::kArity, "exponential: expected 1 argument, got 2");
  check_malformed(sp, {make_string("a")}, num(1), ErrorKind::kType,
                  "exponential: argument 1 (rate) must be a number, got a string");
  Call call(sp, {num(2)});
  for (double x : {0.0, -1.0, -kInf, kInf}) CHECK(call.log_density(num(x)) == -kInf);
  CHECK(call.log_density(vec({1})) == -kInf);
  CHECK(call.log_density(num(5e-324)) == doctest::Approx(std::log(2.0)));
}

// The density rate e^(-rate x) underflows to 0 from rate x = 745 on, while its log is finite: scored in logs, and
// checked against Boost.Math in long double, where e^(-1000) is representable.
TEST_CASE("exponential densities far in the tail and at extreme rates are finite") {
  const Sp& sp = builtin_sp("exponential");
  for (auto [rate, x] : {std::pair{1e-300, 1e303}, {1e300, 1e-297}, {1.0, 1e3}, {1e308, 5e-306}, {5e-324, 1e308}}) {
    CAPTURE(rate);
    CAPTURE(x);
    const boost::math::exponential_distribution<long double> d(rate);
    const long double exact = std::log(boost::math::pdf(d, static_cast<long double>(x)));
    CHECK(Call(sp, {num(rate)}).log_density(num(x)) == doctest::Approx(double(exact)).epsilon(1e-12));
  }
  // The naive form, the log of the density, is -inf at the first three.
  for (auto [rate, x] : {std::pair{1e-300, 1e303}, {1e300, 1e-297}, {1.0, 1e3}})
    CHECK(std::log(rate * std::exp(-rate * x)) == -kInf);
  // rate x overflows only where the log density is below the largest double.
  CHECK(Call(sp, {num(1e10)}).log_density(num(1e300)) == -kInf);
}

// E / rate overflowed to inf for (exponential 1e-310) in 98 % of draws (and for 5e-324 in all), and a huge rate
// can round a draw to 0: both are outside the support, so draws are clamped into it, as gamma's.
TEST_CASE("exponential draws at extreme rates stay in the support") {
  const Sp& sp = builtin_sp("exponential");
  Rng rng(kSeed);
  for (double rate : {1e-310, 5e-324, 1e308, 1.7e308}) {
    CAPTURE(rate);
    CHECK(draws_of_infinite_density(sp, {num(rate)}, 2000, rng) == 0);
  }
  CHECK(std::get<double>(Call(sp, {num(5e-324)}).simulate(rng)) == std::numeric_limits<double>::max());
  // Subnormal draws are kept: exponential(1e308) has mean 1e-308 (a lift to the smallest normal double would make
  // it 2.3e-308).
  constexpr int kScaleDraws = 100000;
  double sum = 0;
  for (int i = 0; i < kScaleDraws; ++i) {
    const double x = std::get<double>(Call(sp, {num(1e308)}).simulate(rng));
    REQUIRE(x > 0);
    sum += x * 1e308;
  }
  CHECK(std::fabs(sum / kScaleDraws - 1) < 4.5 / std::sqrt(double(kScaleDraws)));  // exponential(1): sd 1
}

}  // namespace vnt::test
