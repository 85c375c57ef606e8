// lognormal: conformance over a parameter table (mildly to heavily skewed), messages, extreme parameters.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/lognormal.hpp>

#include <cmath>
#include <limits>
#include <numbers>
#include <tuple>

#include "tests/support/dist_conformance.hpp"

namespace vnt::test {

TEST_CASE("lognormal conforms") {
  const Sp& sp = builtin_sp("lognormal");
  for (auto [mu, sigma] : {std::pair{0.0, 1.0}, {1.5, 0.25}, {-2.0, 2.0}, {3.0, 0.05}, {0.5, 1.2}})
    check_continuous(sp, {num(mu), num(sigma)}, boost::math::lognormal_distribution<>(mu, sigma), 0, kInf);
}

TEST_CASE("lognormal errors") {
  const Sp& sp = builtin_sp("lognormal");
  check_invalid(sp, {num(0), num(0)}, num(1), "lognormal: argument 2 (sigma) is 0, but must be positive");
  check_invalid(sp, {num(0), num(-1)}, num(1), "lognormal: argument 2 (sigma) is -1, but must be positive");
  check_invalid(sp, {num(0), num(kInf)}, num(1), "lognormal: argument 2 (sigma) is inf, but must be finite");
  check_invalid(sp, {num(-kInf), num(1)}, num(1),
                "lognormal: argument 1 (mu) is -inf, but must be a finite number");
  check_malformed(sp, {num(0)}, num(1), ErrorKind::kArity, "lognormal: expected 2 arguments, got 1");
  check_malformed(sp, {num(0), num(1), num(2)}, num(1), ErrorKind::kArity, "lognormal: expected 2 arguments, got 3");
  check_malformed(sp, {vec({0}), num(1)}, num(1), ErrorKind::kType,
                  "lognormal: argument 1 (mu) must be a number, got a vector");
  Call call(sp, {num(0), num(1)});
  for (double x : {0.0, -1.0, -kInf, kInf}) CHECK(call.log_density(num(x)) == -kInf);
  CHECK(call.log_density(num(1)) == doctest::Approx(-0.5 * std::log(2 * std::numbers::pi)));
}

// Written naively, -(log x - mu)^2 / (2 sigma^2) - log(x sigma sqrt(2 pi)) overflows or underflows where the log
// density is finite: inf / inf in the exponent for mu = sigma = 1e308, an infinite x sigma for sigma = 1e308, 0 / 0
// and -log 0 for sigma = 1e-200 at x = e^mu = 1e-200. Checked against Boost.Math in long double, whose range holds
// 1e616 and 1e-400, or the exact value at the median.
TEST_CASE("lognormal densities at extreme parameters are finite") {
  const Sp& sp = builtin_sp("lognormal");
  auto naive = [](double x, double mu, double sigma) {
    const double d = std::log(x) - mu;
    return -d * d / (2 * sigma * sigma) - std::log(x * sigma * std::sqrt(2 * std::numbers::pi));
  };
  auto exact = [](double x, double mu, double sigma) {
    const boost::math::lognormal_distribution<long double> d(mu, sigma);
    return double(std::log(boost::math::pdf(d, static_cast<long double>(x))));
  };
  for (auto [x, mu, sigma] : {std::tuple{2.0, 1e308, 1e308}, {1e-300, -1e307, 1e306}, {10.0, 0.0, 1e308},
                              {1e300, 1.0, 1.5e308}, {3.0, 1.0, 1e-3}}) {
    CAPTURE(x);
    CAPTURE(mu);
    CAPTURE(sigma);
    CHECK(Call(sp, {num(mu), num(sigma)}).log_density(num(x)) == doctest::Approx(exact(x, mu, sigma)).epsilon(1e-12));
  }
  CHECK(std::isnan(naive(2.0, 1e308, 1e308)));
  CHECK(naive(10.0, 0.0, 1e308) == -kInf);
  // At the median e^mu the standardized log is 0: the log density is -log x - log sigma - log(2 pi) / 2.
  const double x = 1e-200, mu = std::log(x);
  CHECK(std::isnan(naive(x, mu, 1e-200)));
  CHECK(Call(sp, {num(mu), num(1e-200)}).log_density(num(x)) ==
        doctest::Approx(-std::log(x) - std::log(1e-200) - 0.5 * std::log(2 * std::numbers::pi)).epsilon(1e-14));
  // A standardized log beyond 1.9e154 has a log density below the largest double.
  CHECK(Call(sp, {num(-1e308), num(1)}).log_density(num(1)) == -kInf);
}

// e^(mu + sigma z) overflows to inf or underflows to 0, outside the support, for mu far from 0 or a large sigma:
// draws are clamped into it, as gamma's.
TEST_CASE("lognormal draws that overflow or underflow stay in the support") {
  const Sp& sp = builtin_sp("lognormal");
  Rng rng(kSeed);
  for (auto [mu, sigma] : {std::pair{1000.0, 1.0}, {-1000.0, 1.0}, {0.0, 1e3}, {-1e308, 1e308}, {1e300, 1e308}}) {
    CAPTURE(mu);
    CAPTURE(sigma);
    CHECK(draws_of_infinite_density(sp, {num(mu), num(sigma)}, 2000, rng) == 0);
  }
  CHECK(std::get<double>(Call(sp, {num(1000), num(1)}).simulate(rng)) == std::numeric_limits<double>::max());
  CHECK(std::get<double>(Call(sp, {num(-1000), num(1)}).simulate(rng)) == std::numeric_limits<double>::denorm_min());
  // Subnormal draws are kept: log x for (lognormal -720 1) is normal(-720, 1), all of it below the smallest normal
  // double's log, -708.4 (a lift to it would put the mean of log x there).
  constexpr int kSubnormalDraws = 20000;
  double sum = 0;
  for (int i = 0; i < kSubnormalDraws; ++i)
    sum += std::log(std::get<double>(Call(sp, {num(-720), num(1)}).simulate(rng))) + 720;
  CHECK(std::fabs(sum / kSubnormalDraws) < 4.5 / std::sqrt(double(kSubnormalDraws)));
}

}  // namespace vnt::test
