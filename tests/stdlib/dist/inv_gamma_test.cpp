// inv_gamma: conformance over a parameter table, domain/arity/type messages.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/inverse_gamma.hpp>

#include <tuple>

#include "tests/support/dist_conformance.hpp"

namespace vnt::test {

TEST_CASE("inv_gamma conforms") {
  const Sp& sp = builtin_sp("inv_gamma");
  for (auto [shape, scale] : {std::pair{1.0, 1.0}, {3.0, 0.5}, {0.7, 2.0}, {20.0, 30.0}})
    check_continuous(sp, {num(shape), num(scale)}, boost::math::inverse_gamma_distribution<>(shape, scale), 0,
                     kInf);
}

TEST_CASE("inv_gamma errors") {
  const Sp& sp = builtin_sp("inv_gamma");
  check_invalid(sp, {num(-1), num(1)}, num(1), "inv_gamma: argument 1 (shape) is -1, but must be positive");
  check_invalid(sp, {num(1), num(0)}, num(1), "inv_gamma: argument 2 (scale) is 0, but must be positive");
  check_malformed(sp, {}, num(1), ErrorKind::kArity, "inv_gamma: expected 2 arguments, got 0");
  check_malformed(sp, {make_nil(), num(1)}, num(1), ErrorKind::kType,
                  "inv_gamma: argument 1 (shape) must be a number, got nil");
  Call call(sp, {num(2), num(1)});
  for (double x : {0.0, -3.0, kInf}) CHECK(call.log_density(num(x)) == -kInf);
  // A gamma draw of a tiny shape underflows to 0 (about once in 1600 at 0.01), and scale / 0 is inf: outside.
  Rng rng(kSeed);
  for (double shape : {0.01, 1e-3}) CHECK(draws_of_infinite_density(sp, {num(shape), num(1)}, 20000, rng) == 0);
}

// As gamma: shape log(scale) - lgamma(shape) was inf - inf above about 1e305.
TEST_CASE("inv_gamma with huge parameters: finite densities, draws near the mode") {
  const Sp& sp = builtin_sp("inv_gamma");
  auto log_pdf = [](double shape, double scale, double x) {
    return std::log(boost::math::pdf(boost::math::inverse_gamma_distribution<>(shape, scale), x));
  };
  for (auto [shape, scale, x] : {std::tuple{2e6, 2e6, 1.0}, {2e6, 2e6, 0.999}, {3e7, 6e7, 2.001}})
    CHECK(Call(sp, {num(shape), num(scale)}).log_density(num(x)) ==
          doctest::Approx(log_pdf(shape, scale, x)).epsilon(1e-9));
  const double at_mean = 0.5 * (std::log(1e308) - std::log(2 * M_PI));  // as gamma(s, s) at 1
  CHECK(Call(sp, {num(1e308), num(1e308)}).log_density(num(1)) == doctest::Approx(at_mean).epsilon(1e-12));
  CHECK(std::isfinite(Call(sp, {num(1e308), num(1e308)}).log_density(num(0.8))));
  Rng rng(kSeed);
  for (int i = 0; i < 100; ++i)
    CHECK(std::get<double>(Call(sp, {num(1e308), num(1e308)}).simulate(rng)) == doctest::Approx(1).epsilon(1e-12));
}

// As for gamma: draws below the smallest normal double were lifted to it. (inv_gamma 1 1e-308) is 1e-308 / E with
// E exponential(1), below 1e-308 when E > 1: probability e^-1 (it was 0).
TEST_CASE("inv_gamma draws at a scale near 1e-308 keep their subnormal values") {
  const Sp& sp = builtin_sp("inv_gamma");
  Rng rng(kSeed);
  constexpr int kScaleDraws = 100000;
  int below = 0;
  for (int i = 0; i < kScaleDraws; ++i) {
    const double x = std::get<double>(Call(sp, {num(1), num(1e-308)}).simulate(rng));
    REQUIRE(x > 0);
    below += x < 1e-308 ? 1 : 0;
  }
  const double p = std::exp(-1.0);
  CHECK(std::fabs(below / double(kScaleDraws) - p) < 4.5 * std::sqrt(p * (1 - p) / kScaleDraws));
}
}  // namespace vnt::test
