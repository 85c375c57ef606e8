// beta: conformance over a parameter table (including U-shaped and flat), boundary densities, messages.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/beta.hpp>

#include <tuple>

#include "tests/support/dist_conformance.hpp"

namespace vnt::test {

TEST_CASE("beta conforms") {
  const Sp& sp = builtin_sp("beta");
  for (auto [a, b] : {std::pair{1.0, 1.0}, {0.5, 0.5}, {2.0, 5.0}, {1.0, 3.0}, {30.0, 0.8}})
    check_continuous(sp, {num(a), num(b)}, boost::math::beta_distribution<>(a, b), 0, 1);
}

TEST_CASE("beta boundaries and errors") {
  const Sp& sp = builtin_sp("beta");
  CHECK(Call(sp, {num(1), num(3)}).log_density(num(0)) == doctest::Approx(std::log(3.0)));
  CHECK(Call(sp, {num(2), num(3)}).log_density(num(0)) == -kInf);
  for (double x : {-0.1, 1.5, kInf}) CHECK(Call(sp, {num(2), num(2)}).log_density(num(x)) == -kInf);
  Rng rng(kSeed);  // both gammas underflow for tiny parameters; draws must stay strictly inside (0, 1)
  for (int i = 0; i < 1000; ++i) {
    double x = std::get<double>(Call(sp, {num(1e-3), num(1e-3)}).simulate(rng));
    CHECK((x > 0 && x < 1));
  }
  check_invalid(sp, {num(0), num(1)}, num(0.5), "beta: argument 1 (alpha) is 0, but must be positive");
  check_invalid(sp, {num(1), num(-1)}, num(0.5), "beta: argument 2 (beta) is -1, but must be positive");
  check_malformed(sp, {num(1), num(1), num(1)}, num(0.5), ErrorKind::kArity, "beta: expected 2 arguments, got 3");
  check_malformed(sp, {num(1), vec({1})}, num(0.5), ErrorKind::kType,
                  "beta: argument 2 (beta) must be a number, got a vector");
}

// A small shape puts mass within rounding of an endpoint, where the density is +inf: the gamma draws underflow for
// (beta 0.01 1) about once in 1500 draws, and g_a / (g_a + g_b) rounds to 1 for (beta 1 0.01) in most of them.
TEST_CASE("beta draws with small shapes stay strictly inside (0, 1), where the density is finite") {
  const Sp& sp = builtin_sp("beta");
  Rng rng(kSeed);
  for (auto [a, b] : {std::pair{0.01, 1.0}, {1.0, 0.01}, {0.5, 0.01}, {0.002, 0.002}}) {
    CAPTURE(a);
    CAPTURE(b);
    CHECK(draws_of_infinite_density(sp, {num(a), num(b)}, 20000, rng) == 0);
  }
}

// Above about 1e305, lgamma overflows and log B(a, b) was inf - inf: NaN densities, and draws that fell to 0 (two
// infinite gammas made a NaN, taken for tiny parameters). Large parameters use Stirling forms instead.
TEST_CASE("beta with huge parameters: finite densities, draws near the mean") {
  const Sp& sp = builtin_sp("beta");
  auto log_pdf = [](double a, double b, double x) {
    return std::log(boost::math::pdf(boost::math::beta_distribution<>(a, b), x));
  };
  // Where Boost's pdf is representable, the Stirling forms agree with it (both large; one small, one large).
  for (auto [a, b, x] : {std::tuple{2e6, 3e6, 0.4}, {2e6, 3e6, 0.401}, {5.0, 1e7, 5e-7}, {0.5, 2e6, 1e-7}})
    CHECK(Call(sp, {num(a), num(b)}).log_density(num(x)) == doctest::Approx(log_pdf(a, b, x)).epsilon(1e-9));
  // beta(a, a) at 1/2 is 1 / sqrt(2 pi / (8 a)) up to O(1/a).
  const double at_mode = 0.5 * (std::log(8.0) + std::log(1e308) - std::log(2 * M_PI));
  CHECK(Call(sp, {num(1e308), num(1e308)}).log_density(num(0.5)) == doctest::Approx(at_mode).epsilon(1e-12));
  // Off the mode by far more than its width (3.5e-155): about a log(x / mu) + b log((1 - x) / (1 - mu)).
  CHECK(Call(sp, {num(1e308), num(1e308)}).log_density(num(0.25)) ==
        doctest::Approx(1e308 * std::log(0.75)).epsilon(1e-12));
  for (auto [a, b, x] : {std::tuple{3.0, 1e308, 1e-308}, {1e308, 0.5, 0.75}, {1.7e308, 1.7e308, 0.5}})
    CHECK(std::isfinite(Call(sp, {num(a), num(b)}).log_density(num(x))));
  Rng rng(kSeed);
  for (int i = 0; i < 100; ++i) {
    CHECK(std::get<double>(Call(sp, {num(1e308), num(1e308)}).simulate(rng)) == doctest::Approx(0.5).epsilon(1e-12));
    CHECK(std::get<double>(Call(sp, {num(1e300), num(3e300)}).simulate(rng)) == doctest::Approx(0.25).epsilon(1e-12));
    const double x = std::get<double>(Call(sp, {num(3), num(1e308)}).simulate(rng));
    CHECK((x > 0 && x < 1e-306));
  }
}

// Below shape 0.1 a gamma draw underflows to 0 with probability about e^(-745 shape): Boost's beta lost most draws
// where both gammas were tiny, the interior of (0, 1) (22 % too few for 1e-3). Draws are now made from log gammas.
TEST_CASE("beta with tiny shapes puts the right mass inside (0.01, 0.99)") {
  const Sp& sp = builtin_sp("beta");
  Rng rng(kSeed);
  constexpr int kTinyDraws = 200000;
  for (double a : {1e-3, 1e-4}) {
    CAPTURE(a);
    const boost::math::beta_distribution<> exact(a, a);
    const double p = boost::math::cdf(exact, 0.99) - boost::math::cdf(exact, 0.01);
    int inside = 0;
    for (int i = 0; i < kTinyDraws; ++i) {
      const double x = std::get<double>(Call(sp, {num(a), num(a)}).simulate(rng));
      inside += x > 0.01 && x < 0.99 ? 1 : 0;
    }
    const double se = std::sqrt(p * (1 - p) / kTinyDraws);
    CHECK(std::fabs(inside / double(kTinyDraws) - p) < 4.5 * se);
  }
}
}  // namespace vnt::test
