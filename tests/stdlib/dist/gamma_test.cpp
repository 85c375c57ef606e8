// gamma: conformance over a parameter table (shape < 1 has a pole at 0), domain/arity/type messages.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/gamma.hpp>

#include <tuple>
#include <vector>

#include "tests/support/dist_conformance.hpp"

namespace vnt::test {

TEST_CASE("gamma conforms") {
  const Sp& sp = builtin_sp("gamma");
  for (auto [shape, rate] : {std::pair{1.0, 1.0}, {0.5, 2.0}, {3.5, 0.1}, {40.0, 8.0}})
    check_continuous(sp, {num(shape), num(rate)}, boost::math::gamma_distribution<>(shape, 1 / rate), 0, kInf);
}

TEST_CASE("gamma errors") {
  const Sp& sp = builtin_sp("gamma");
  check_invalid(sp, {num(0), num(1)}, num(1), "gamma: argument 1 (shape) is 0, but must be positive");
  check_invalid(sp, {num(1), num(-2.5)}, num(1), "gamma: argument 2 (rate) is -2.5, but must be positive");
  check_malformed(sp, {num(1)}, num(1), ErrorKind::kArity, "gamma: expected 2 arguments, got 1");
  check_malformed(sp, {num(1), make_string("a")}, num(1), ErrorKind::kType,
                  "gamma: argument 2 (rate) must be a number, got a string");
  Call call(sp, {num(2), num(1)});
  for (double x : {0.0, -1.0, kInf}) CHECK(call.log_density(num(x)) == -kInf);
  Rng rng(kSeed);  // a tiny shape underflows in double precision; draws must stay in the support
  for (int i = 0; i < 1000; ++i) CHECK(std::get<double>(Call(sp, {num(1e-3), num(1)}).simulate(rng)) > 0);
  // (gamma 0.01 1) underflows to 0, outside the support, about once in 1600 draws.
  for (double shape : {0.01, 1e-3}) CHECK(draws_of_infinite_density(sp, {num(shape), num(1)}, 20000, rng) == 0);
}

// shape log(rate) - lgamma(shape) was inf - inf above about 1e305, and Boost's sampler returned inf there (and drifts
// from about 1e12): large shapes use Stirling's form and Wilson-Hilferty draws.
TEST_CASE("gamma with huge parameters: finite densities, draws with the right spread") {
  const Sp& sp = builtin_sp("gamma");
  auto log_pdf = [](double shape, double rate, double x) {
    return std::log(boost::math::pdf(boost::math::gamma_distribution<>(shape, 1 / rate), x));
  };
  for (auto [shape, rate, x] : {std::tuple{2e6, 2e6, 1.0}, {2e6, 2e6, 1.002}, {3e7, 0.5, 5.99e7}, {2e6, 1e-300, 2e306}})
    CHECK(Call(sp, {num(shape), num(rate)}).log_density(num(x)) ==
          doctest::Approx(log_pdf(shape, rate, x)).epsilon(1e-9));
  // At its mean, gamma(s, s) has density sqrt(s / (2 pi)) up to O(1/s).
  const double at_mean = 0.5 * (std::log(1e308) - std::log(2 * M_PI));
  CHECK(Call(sp, {num(1e308), num(1e308)}).log_density(num(1)) == doctest::Approx(at_mean).epsilon(1e-12));
  CHECK(std::isfinite(Call(sp, {num(1e308), num(1e308)}).log_density(num(1.5))));
  CHECK(Call(sp, {num(1e308), num(1e308)}).log_density(num(1e10)) == -kInf);
  Rng rng(kSeed);
  std::vector<double> xs;
  for (int i = 0; i < 2000; ++i) {
    CHECK(std::get<double>(Call(sp, {num(1e308), num(1e308)}).simulate(rng)) == doctest::Approx(1).epsilon(1e-12));
    xs.push_back((std::get<double>(Call(sp, {num(1e15), num(1e15)}).simulate(rng)) - 1) * std::sqrt(1e15));
  }
  double m = 0, v = 0;
  for (double x : xs) m += x / static_cast<double>(xs.size());
  for (double x : xs) v += (x - m) * (x - m) / static_cast<double>(xs.size() - 1);
  CHECK(std::abs(m) < 0.1);  // standardized: mean 0, sd 1 (2000 draws)
  CHECK(std::sqrt(v) == doctest::Approx(1).epsilon(0.1));
}

// Draws below the smallest normal double are valid (subnormal): they were lifted to it, so (gamma 1 1e308), an
// exponential of mean 1e-308, had a mean of 2.33e-308. Only a draw of 0, outside the support, is lifted.
TEST_CASE("gamma draws at a scale near 1e-308 keep their subnormal values") {
  const Sp& sp = builtin_sp("gamma");
  Rng rng(kSeed);
  constexpr int kScaleDraws = 100000;
  double sum = 0;
  for (int i = 0; i < kScaleDraws; ++i) {
    const double x = std::get<double>(Call(sp, {num(1), num(1e308)}).simulate(rng));
    REQUIRE(x > 0);
    sum += x * 1e308;
  }
  CHECK(std::fabs(sum / kScaleDraws - 1) < 4.5 / std::sqrt(double(kScaleDraws)));  // exponential(1): sd 1
}
}  // namespace vnt::test
