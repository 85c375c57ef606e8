// beta_binomial: conformance against the pmf from lgamma, the list gibbs enumerates, messages, 2^53 trials and
// parameters up to 1e308.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/binomial.hpp>

#include <tuple>

#include "tests/support/dist_conformance.hpp"

namespace vnt::test {
namespace beta_binomial_test {

double log_beta(double x, double y) { return std::lgamma(x) + std::lgamma(y) - std::lgamma(x + y); }

// The direct transcription: log C(n, k) + log B(k + a, n - k + b) - log B(a, b). The reference for moderate
// parameters, where lgamma's rounding is far below the tolerance.
double direct_log_pmf(double k, double n, double a, double b) {
  return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1) + log_beta(k + a, n - k + b) -
         log_beta(a, b);
}

}  // namespace beta_binomial_test

TEST_CASE("beta_binomial conforms") {
  const Sp& sp = builtin_sp("beta_binomial");
  // Uniform (a = b = 1), U-shaped, skewed, close to a binomial, and the largest list gibbs takes.
  for (auto [n, a, b] : {std::tuple{0.0, 1.0, 1.0}, {1.0, 0.5, 0.5}, {10.0, 1.0, 1.0}, {10.0, 2.0, 5.0},
                         {30.0, 0.2, 0.3}, {100.0, 50.0, 20.0}, {4095.0, 3.0, 7.0}}) {
    check_discrete(sp, {num(n), num(a), num(b)}, count_range(0, static_cast<int>(n)), [&](double k) {
      return std::exp(beta_binomial_test::direct_log_pmf(k, n, a, b));
    });
  }
}

TEST_CASE("beta_binomial lists 0 to n for gibbs up to n = 4095, and nothing beyond") {
  const Sp& sp = builtin_sp("beta_binomial");
  auto listed = sp.enumerate(Call(sp, {num(4095), num(2), num(3)}).args());
  REQUIRE(listed.has_value());
  REQUIRE(listed->size() == 4096);
  for (size_t i = 0; i < listed->size(); ++i) CHECK(values_equal((*listed)[i], num(static_cast<double>(i))));
  for (double n : {4096.0, 9007199254740992.0})
    CHECK_FALSE(sp.enumerate(Call(sp, {num(n), num(2), num(3)}).args()));
  check_error([&] { sp.enumerate(Call(sp, {num(1e16), num(2), num(3)}).args()); }, ErrorKind::kDomain,
              "beta_binomial: argument 1 (n) is 1e+16, but must be at most 9007199254740992");
}

TEST_CASE("beta_binomial errors") {
  const Sp& sp = builtin_sp("beta_binomial");
  check_invalid(sp, {num(1.5), num(1), num(1)}, num(0),
                "beta_binomial: argument 1 (n) is 1.5, but must be a non-negative integer");
  check_invalid(sp, {num(1e16), num(1), num(1)}, num(0),
                "beta_binomial: argument 1 (n) is 1e+16, but must be at most 9007199254740992");
  check_invalid(sp, {num(5), num(0), num(1)}, num(0), "beta_binomial: argument 2 (a) is 0, but must be positive");
  check_invalid(sp, {num(5), num(kInf), num(1)}, num(0), "beta_binomial: argument 2 (a) is inf, but must be finite");
  check_invalid(sp, {num(5), num(1), num(-1)}, num(0), "beta_binomial: argument 3 (b) is -1, but must be positive");
  check_malformed(sp, {num(5), num(1)}, num(0), ErrorKind::kArity, "beta_binomial: expected 3 arguments, got 2");
  check_malformed(sp, {num(5), num(1), make_list({})}, num(0), ErrorKind::kType,
                  "beta_binomial: argument 3 (b) must be a number, got a list");
  Call call(sp, {num(10), num(2), num(3)});
  for (double x : {-1.0, 0.5, 10.5, 11.0, kInf}) CHECK(call.log_density(num(x)) == -kInf);
  // C(10, k) (2)_k (3)_(10 - k) / (5)_10, at k = 0: (3 ... 12) / (5 ... 14).
  CHECK(call.log_density(num(0)) == doctest::Approx(std::log(3.0 * 4 / (13 * 14))));
}

// References from mpmath at 400 digits (enough for lgamma(1e308)): the direct form, the parameters the doubles given.
TEST_CASE("beta_binomial at 2^53 trials and parameters up to 1e308: log densities where lgamma cancels or is NaN") {
  using beta_binomial_test::direct_log_pmf;
  const Sp& sp = builtin_sp("beta_binomial");
  const double n53 = 9007199254740992.0;
  for (auto [k, n, a, b, ref] : {
           std::tuple{0.0, n53, 1.0, 1.0, -36.7368005696771015101356},  // uniform: -log(2^53 + 1)
           {12345.0, n53, 1.0, 1.0, -36.7368005696771015101356},
           {n53 / 2, n53, 1.0, 1.0, -36.7368005696771015101356},
           {n53, n53, 1.0, 1.0, -36.7368005696771015101356},
           {0.0, n53, 0.5, 0.5, -18.94076522776325080050615},
           {1.0, n53, 0.5, 0.5, -19.63391240832319605441223},
           {n53 / 2, n53, 0.5, 0.5, -37.18838327496655631935065},
           {3e15, n53, 2.5, 4.0, -36.01499532573993881076175},
           {333333333333333.0, 1e15, 1e15, 2e15, -17.58012906849776898992047},
           {3.0, 10.0, 1e300, 1e300, -2.14398006281740709992462},  // binomial(10, 1/2): log(120 / 1024)
           {n53 / 2, n53, 1e308, 1e308, -18.59419163748327815967532},  // a + b overflows
           {1369899753221000.0, 4421107196995748.0, 1.4297367605845303e307, 3.1844839453119185e307,
            -20.77241755244507559325127},  // k b overflows
           {0.0, 8691928351.0, 1e-200, 1e-200, -0.6931471805599453094172321},  // cells expecting 1e-400
           {0.0, 8691928351.0, 5.766293269987734e-278, 1.5892526515359184e-277, -0.3095637836304993106018946},
           {0.0, 100.0, 1e-300, 1.0, -5.187377517639620390796087e-300},
           {5.0, 100.0, 1e-300, 1.0, -692.3849658106478055549391}}) {
    CAPTURE(k);
    CAPTURE(n);
    CAPTURE(a);
    CAPTURE(b);
    CHECK(Call(sp, {num(n), num(a), num(b)}).log_density(num(k)) == doctest::Approx(ref).epsilon(1e-12));
  }
  // The direct form: tens of nats off at 2^53 trials, every digit lost at 1e300, NaN once a + b overflows.
  CHECK(std::fabs(direct_log_pmf(n53 / 2, n53, 1, 1) - -36.7368005696771015101356) > 10);
  CHECK(std::fabs(direct_log_pmf(3, 10, 1e300, 1e300) - -2.14398006281740709992462) > 1);
  CHECK(std::isnan(direct_log_pmf(n53 / 2, n53, 1e308, 1e308)));
  CHECK(Call(sp, {num(0), num(1e308), num(1e-308)}).log_density(num(0)) == 0);
}

TEST_CASE("beta_binomial draws are exact integers in 0 to n, also for 2^53 trials and extreme shapes") {
  const Sp& sp = builtin_sp("beta_binomial");
  Rng rng(kSeed);
  const double n53 = 9007199254740992.0;
  // a = b = 1e300: p is 1/2 to 1e-150, so a draw is binomial(2^53, 1/2).
  double sum = 0, sum2 = 0;
  constexpr int kCount = 100;
  for (int i = 0; i < kCount; ++i) {
    const double k = std::get<double>(Call(sp, {num(n53), num(1e300), num(1e300)}).simulate(rng));
    REQUIRE(k == std::floor(k));
    const double z = (k - n53 / 2) / std::sqrt(n53 / 4);
    sum += z, sum2 += z * z;
  }
  CHECK(std::fabs(sum / kCount) < 0.4);
  CHECK(std::sqrt(sum2 / kCount) == doctest::Approx(1).epsilon(0.3));
  // Tiny shapes: p is within 1e-16 of 0 or 1 but in about 7e-7 of draws (2 log(1e16) a b / (a + b)), so the draw is
  // 0, or n about a / (a + b) of the time.
  int at_n = 0;
  for (int i = 0; i < 2000; ++i) {
    const double k = std::get<double>(Call(sp, {num(n53), num(1e-8), num(3e-8)}).simulate(rng));
    REQUIRE((k == 0 || k == n53));
    at_n += k == n53;
  }
  CHECK(at_n / 2000.0 == doctest::Approx(0.25).epsilon(0.15));
  // a large and b small: q = 1 - p is about 5e-16, and of 2^53 trials n E[q] = 4.5 fail (sd 6.7: q n is 9 times a
  // gamma(0.5) draw).
  double failures = 0;
  for (int i = 0; i < 400; ++i) {
    const double k = std::get<double>(Call(sp, {num(n53), num(1e15), num(0.5)}).simulate(rng));
    REQUIRE(k == std::floor(k));
    REQUIRE(k <= n53);
    failures += n53 - k;
  }
  CHECK(failures / 400 == doctest::Approx(n53 * 0.5 / (1e15 + 0.5)).epsilon(4 * 6.7 / 20 / 4.5));
}

}  // namespace vnt::test
