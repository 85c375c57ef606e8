// laplace: conformance over a parameter table, domain/arity/type messages, extreme parameters.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/laplace.hpp>

#include <cmath>
#include <limits>
#include <tuple>

#include "tests/support/dist_conformance.hpp"

namespace vnt::test {

TEST_CASE("laplace conforms") {
  const Sp& sp = builtin_sp("laplace");
  for (auto [mu, b] : {std::pair{0.0, 1.0}, {-3.0, 0.25}, {100.0, 40.0}, {2.5, 1e-3}})
    check_continuous(sp, {num(mu), num(b)}, boost::math::laplace_distribution<>(mu, b), -kInf, kInf, mu);  // kink
}

TEST_CASE("laplace errors") {
  const Sp& sp = builtin_sp("laplace");
  check_invalid(sp, {num(0), num(0)}, num(0), "laplace: argument 2 (b) is 0, but must be positive");
  check_invalid(sp, {num(0), num(-1)}, num(0), "laplace: argument 2 (b) is -1, but must be positive");
  check_invalid(sp, {num(0), num(kInf)}, num(0), "laplace: argument 2 (b) is inf, but must be finite");
  check_invalid(sp, {num(kInf), num(1)}, num(0), "laplace: argument 1 (mu) is inf, but must be a finite number");
  check_malformed(sp, {}, num(0), ErrorKind::kArity, "laplace: expected 2 arguments, got 0");
  check_malformed(sp, {num(0), num(1), num(1)}, num(0), ErrorKind::kArity, "laplace: expected 2 arguments, got 3");
  check_malformed(sp, {num(0), make_nil()}, num(0), ErrorKind::kType,
                  "laplace: argument 2 (b) must be a number, got nil");
  Call call(sp, {num(1), num(2)});
  for (double x : {kInf, -kInf}) CHECK(call.log_density(num(x)) == -kInf);
  CHECK(call.log_density(vec({1})) == -kInf);
  CHECK(call.log_density(num(1)) == doctest::Approx(-std::log(4.0)));
  CHECK(call.log_density(num(-3)) == doctest::Approx(-2 - std::log(4.0)));
}

// Written naively, -|x - mu| / b - log(2 b) is -inf where the log density is finite: 2 b overflows for b above
// 9e307, and x - mu for far-apart finite values. Checked against Boost.Math in long double, which holds 2e308, here
// and at tiny scales.
TEST_CASE("laplace densities at extreme parameters are finite") {
  const Sp& sp = builtin_sp("laplace");
  auto naive = [](double x, double mu, double b) { return -std::abs(x - mu) / b - std::log(2 * b); };
  auto exact = [](double x, double mu, double b) {
    const boost::math::laplace_distribution<long double> d(mu, b);
    return double(std::log(boost::math::pdf(d, static_cast<long double>(x))));
  };
  for (auto [x, mu, b] : {std::tuple{0.0, 0.0, 1e308}, {-1e308, 1e308, 1e308}, {1.7e308, -1.7e308, 1.7e308},
                          {-1e308, 1e308, 1e306}, {1e-300, 0.0, 1e-300}, {5e-324, 0.0, 5e-324}}) {
    CAPTURE(x);
    CAPTURE(mu);
    CAPTURE(b);
    CHECK(Call(sp, {num(mu), num(b)}).log_density(num(x)) == doctest::Approx(exact(x, mu, b)).epsilon(1e-12));
  }
  for (auto [x, mu, b] : {std::tuple{0.0, 0.0, 1e308}, {-1e308, 1e308, 1e308}, {1.7e308, -1.7e308, 1.7e308},
                          {-1e308, 1e308, 1e306}})
    CHECK(naive(x, mu, b) == -kInf);
  // |x - mu| / b beyond the largest double: a log density below it.
  CHECK(Call(sp, {num(0), num(1e-10)}).log_density(num(1e300)) == -kInf);
  CHECK(Call(sp, {num(1e308), num(0.5)}).log_density(num(-1e308)) == -kInf);
}

// mu + b E overflowed for (laplace 1e308 1e308) in three draws in ten (b E alone to inf in one in twelve, giving
// -inf): draws are clamped to the largest double, as normal's.
TEST_CASE("laplace draws stay finite when mu + b E overflows") {
  const Sp& sp = builtin_sp("laplace");
  Rng rng(kSeed);
  for (auto [mu, b] : {std::pair{1e308, 1e308}, {-1e308, 1e308}, {0.0, 1.7e308}}) {
    CAPTURE(mu);
    CAPTURE(b);
    CHECK(draws_of_infinite_density(sp, {num(mu), num(b)}, 2000, rng) == 0);
  }
  int at_max = 0;
  for (int i = 0; i < 1000; ++i) {
    const double x = std::get<double>(Call(sp, {num(1e308), num(1e308)}).simulate(rng));
    REQUIRE(std::isfinite(x));
    at_max += x == std::numeric_limits<double>::max() ? 1 : 0;
  }
  CHECK(at_max > 150);  // P(E > 0.797) / 2 = 0.225
}

}  // namespace vnt::test
