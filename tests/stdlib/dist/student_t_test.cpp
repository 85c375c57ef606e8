// student_t: conformance over a parameter table (Cauchy to nearly normal, with and without the optional loc and
// scale), messages, extreme parameters, draws with tails past the largest double.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <boost/random/student_t_distribution.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <tuple>

#include "tests/support/dist_conformance.hpp"

namespace vnt::test {
namespace student_t_test {

using LD = long double;

// Boost.Math's t is standard: loc + scale t has the density of the standardized value over scale (the Jacobian).
// In long double: in double, Boost's cdf is 1 wherever z^2 overflows, but for nu = 0.01 3 % of the mass is there.
struct ShiftedT {
  boost::math::students_t_distribution<LD> t;
  double loc = 0, scale = 1;
};
double pdf(const ShiftedT& d, double x) { return double(boost::math::pdf(d.t, (LD(x) - d.loc) / d.scale) / d.scale); }
double cdf(const ShiftedT& d, double x) { return double(boost::math::cdf(d.t, (LD(x) - d.loc) / d.scale)); }

// The log density in long double, whose range holds the standardized values and products that overflow a double.
double exact_log_density(double x, double nu, double loc, double scale) {
  const LD z = (LD(x) - LD(loc)) / LD(scale);
  return double(std::log(boost::math::pdf(boost::math::students_t_distribution<LD>(nu), z)) - std::log(LD(scale)));
}

}  // namespace student_t_test

TEST_CASE("student_t conforms") {
  using student_t_test::ShiftedT, student_t_test::LD;
  const Sp& sp = builtin_sp("student_t");
  for (auto [nu, loc, scale] : {std::tuple{1.0, 0.0, 1.0}, {3.0, 0.0, 1.0}, {2.5, -4.0, 0.5}, {0.8, 1.0, 2.0},
                                {30.0, 5.0, 2.0}, {7.5, 100.0, 1e-3}, {2e6, -1.0, 3.0}}) {
    const ShiftedT ref{boost::math::students_t_distribution<LD>(nu), loc, scale};
    check_continuous(sp, {num(nu), num(loc), num(scale)}, ref, -kInf, kInf, loc);  // a narrow peak at scale 1e-3
  }
  // The optional parameters default to loc 0 and scale 1.
  check_continuous(sp, {num(4)}, ShiftedT{boost::math::students_t_distribution<LD>(4)}, -kInf, kInf);
  check_continuous(sp, {num(4), num(-2)}, ShiftedT{boost::math::students_t_distribution<LD>(4), -2.0}, -kInf, kInf);
}

TEST_CASE("student_t errors") {
  const Sp& sp = builtin_sp("student_t");
  check_invalid(sp, {num(0)}, num(0), "student_t: argument 1 (nu) is 0, but must be positive");
  check_invalid(sp, {num(-1), num(0), num(1)}, num(0), "student_t: argument 1 (nu) is -1, but must be positive");
  check_invalid(sp, {num(kInf)}, num(0), "student_t: argument 1 (nu) is inf, but must be finite");
  check_invalid(sp, {num(3), num(-kInf)}, num(0), "student_t: argument 2 (loc) is -inf, but must be a finite number");
  check_invalid(sp, {num(3), num(0), num(0)}, num(0), "student_t: argument 3 (scale) is 0, but must be positive");
  check_invalid(sp, {num(3), num(0), num(-2)}, num(0), "student_t: argument 3 (scale) is -2, but must be positive");
  check_invalid(sp, {num(3), num(0), num(kInf)}, num(0), "student_t: argument 3 (scale) is inf, but must be finite");
  check_malformed(sp, {}, num(0), ErrorKind::kArity, "student_t: expected 1 to 3 arguments, got 0");
  check_malformed(sp, {num(3), num(0), num(1), num(1)}, num(0), ErrorKind::kArity,
                  "student_t: expected 1 to 3 arguments, got 4");
  check_malformed(sp, {num(3), make_string("a")}, num(0), ErrorKind::kType,
                  "student_t: argument 2 (loc) must be a number, got a string");
  check_malformed(sp, {vec({3})}, num(0), ErrorKind::kType,
                  "student_t: argument 1 (nu) must be a number, got a vector");
  Call call(sp, {num(1)});
  for (double x : {kInf, -kInf}) CHECK(call.log_density(num(x)) == -kInf);
  CHECK(call.log_density(make_string("0")) == -kInf);
  CHECK(call.log_density(num(0)) == doctest::Approx(-std::log(std::numbers::pi)));  // Cauchy: 1 / pi at 0
  CHECK(call.log_density(num(1)) == doctest::Approx(-std::log(2 * std::numbers::pi)));
}

// Written naively, lgamma((nu + 1) / 2) - lgamma(nu / 2) - log(scale sqrt(nu pi)) - (nu + 1) / 2 log1p(z^2 / nu) is
// NaN for a huge nu (inf - inf: lgamma overflows above 2.5e305), -inf for a subnormal one (nu / 2 rounds to 0,
// lgamma(0) is inf) or for a huge scale (its product with sqrt(nu pi) overflows), and -inf where z^2 / nu overflows
// (a tiny nu or scale) though the log density is finite. Checked against Boost.Math in long double.
TEST_CASE("student_t densities at extreme parameters are finite") {
  const Sp& sp = builtin_sp("student_t");
  auto naive = [](double x, double nu, double loc, double scale) {
    const double z = (x - loc) / scale;
    return std::lgamma((nu + 1) / 2) - std::lgamma(nu / 2) - std::log(scale * std::sqrt(nu * std::numbers::pi)) -
           (nu + 1) / 2 * std::log1p(z * z / nu);
  };
  const std::tuple<double, double, double, double> cases[] = {
      {0.0, 1e308, 0.0, 1.0},     {1.5, 1e308, 0.0, 1.0},      {2.0, 1.7e308, 1.0, 0.1},     // huge nu
      {0.5, 5e-324, 0.0, 1.0},    {1e10, 1e-300, 0.0, 1.0},    {-1e300, 1e-10, 0.0, 1e-300},  // tiny nu
      {0.0, 4.0, 0.0, 1e308},     {1e10, 3.0, 0.0, 1e-300},    {-1e308, 2.0, 1e308, 1e308},   // scale, x - loc
      {1e300, 0.5, -1e300, 1e-300}};
  for (auto [x, nu, loc, scale] : cases) {
    CAPTURE(x);
    CAPTURE(nu);
    CAPTURE(loc);
    CAPTURE(scale);
    const double naive_value = naive(x, nu, loc, scale);
    CHECK_FALSE(std::isfinite(naive_value));
    CHECK(Call(sp, {num(nu), num(loc), num(scale)}).log_density(num(x)) ==
          doctest::Approx(student_t_test::exact_log_density(x, nu, loc, scale)).epsilon(1e-12));
  }
  // The normal limit: at nu = 1e308 the density is normal(loc, scale) to O(1 / nu).
  CHECK(Call(sp, {num(1e308), num(3), num(2)}).log_density(num(4)) ==
        doctest::Approx(-0.125 - std::log(2.0) - 0.5 * std::log(2 * std::numbers::pi)).epsilon(1e-14));
  // Between the lgamma and Stirling forms (nu = 20) and up to 1e6, where the lgammas lose 1e-9 nat: both agree
  // with Boost.Math in long double.
  for (double nu : {19.999, 20.0, 20.001, 1e3, 1e6, 1e10})
    for (double x : {0.0, 0.7, -40.0}) {
      CAPTURE(nu);
      CAPTURE(x);
      CHECK(Call(sp, {num(nu)}).log_density(num(x)) ==
            doctest::Approx(student_t_test::exact_log_density(x, nu, 0, 1)).epsilon(1e-13));
    }
  // (nu + 1) / 2 log1p(z^2 / nu) beyond the largest double: a log density below it.
  CHECK(Call(sp, {num(1e308)}).log_density(num(1e200)) == -kInf);
}

// Boost's t divides a normal by the root of a chi-squared draw, which underflows to 0 with probability about
// e^(-372 nu): (student_t 0.01) drew inf one time in 40. Below nu = 0.2 the chi-squared is drawn in logs: the draws
// are finite and follow the t's distribution, up to the clamp at the largest double (for nu = 0.01 the true draw is
// beyond it once in 1250). At huge nu, t = z / sqrt(unit gamma): Boost's gamma drifts there.
TEST_CASE("student_t draws with tiny or huge nu are finite and t-distributed") {
  const Sp& sp = builtin_sp("student_t");
  Rng rng(kSeed);
  int boost_infinite = 0;
  boost::random::student_t_distribution<double> boost_t(0.01);
  for (int i = 0; i < 4000; ++i) boost_infinite += std::isinf(boost_t(rng.engine())) ? 1 : 0;
  CHECK(boost_infinite > 40);
  for (double nu : {0.01, 1e-3, 1e-300, 5e-324, 0.19}) {
    CAPTURE(nu);
    CHECK(draws_of_infinite_density(sp, {num(nu)}, 2000, rng) == 0);
    CHECK(draws_of_infinite_density(sp, {num(nu), num(1e300), num(1e-300)}, 2000, rng) == 0);
  }
  for (double nu : {0.01, 0.05, 0.19, 0.25, 1e12, 1e15}) {
    CAPTURE(nu);
    std::vector<double> xs;
    for (const Value& v : draws(sp, {num(nu)})) xs.push_back(std::get<double>(v));
    std::sort(xs.begin(), xs.end());
    CHECK(ks_p_value(xs, student_t_test::ShiftedT{boost::math::students_t_distribution<student_t_test::LD>(nu)}) >
          kMinPValue);
  }
  std::vector<double> xs;
  for (const Value& v : draws(sp, {num(1e308), num(-3), num(1e-3)})) xs.push_back(std::get<double>(v));
  std::sort(xs.begin(), xs.end());
  CHECK(ks_p_value(xs, boost::math::normal_distribution<>(-3, 1e-3)) > kMinPValue);
  // scale t overflows where loc + scale t is clamped: (student_t 1 1e308 1e308) is a Cauchy of scale 1e308.
  CHECK(draws_of_infinite_density(sp, {num(1), num(1e308), num(1e308)}, 2000, rng) == 0);
  CHECK(draws_of_infinite_density(sp, {num(1e308), num(1e308), num(1e308)}, 2000, rng) == 0);
}

}  // namespace vnt::test
