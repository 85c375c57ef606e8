// make_nig_normal: the Student-t predictive, exchangeability (sequence = marginal likelihood), draws, exact
// statistics (restored bit for bit), absorbing a change of the prior's parameters, errors; and ExactSum.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/quadrature/tanh_sinh.hpp>

#include <numbers>

#include "stdlib/support/exact_sum.hpp"
#include "tests/support/dist_conformance.hpp"

namespace vnt::test {
namespace {

struct Nig {
  Value proc;
  const Sp& sp() const { return procedure(proc).sp(); }
  SpAux& aux() const { return *procedure(proc).aux(); }
  Call call() const { return Call(sp(), {}, &aux()); }
  void add(double x) const { sp().incorporate(num(x), call().args()); }
  void remove(double x) const { sp().unincorporate(num(x), call().args()); }
};

Nig make_nig(double m, double v, double a, double b) {
  Rng rng(kSeed);
  return {Call(builtin_sp("make_nig_normal"), {num(m), num(v), num(a), num(b)}).simulate(rng)};
}

/// The posterior of (m, V, a, b) after xs, from the textbook update (precisions added, squares summed).
std::array<double, 4> updated(double m, double v, double a, double b, const std::vector<double>& xs) {
  double n = 0, s = 0, q = 0;
  for (double x : xs) n += 1, s += x, q += x * x;
  const double vn = 1 / (1 / v + n), mn = vn * (m / v + s);
  return {mn, vn, a + n / 2, b + 0.5 * (q + m * m / v - mn * mn / vn)};
}

/// log p(xs) under the prior: Gamma(a') / Gamma(a) b^a / b'^a' sqrt(V' / V) (2 pi)^(-n/2).
double log_marginal(double m, double v, double a, double b, const std::vector<double>& xs) {
  const auto [mn, vn, an, bn] = updated(m, v, a, b, xs);
  const double n = static_cast<double>(xs.size());
  return std::lgamma(an) - std::lgamma(a) + a * std::log(b) - an * std::log(bn) + 0.5 * std::log(vn / v) -
         n / 2 * std::log(2 * std::numbers::pi);
}

/// A Student-t with nu degrees of freedom, shifted and scaled: the predictive.
struct ScaledT {
  double nu, loc, scale;
  friend double cdf(const ScaledT& t, double x) {
    return boost::math::cdf(boost::math::students_t_distribution<double>(t.nu), (x - t.loc) / t.scale);
  }
  double pdf(double x) const {
    return boost::math::pdf(boost::math::students_t_distribution<double>(nu), (x - loc) / scale) / scale;
  }
};

ScaledT predictive(double m, double v, double a, double b, const std::vector<double>& xs) {
  const auto [mn, vn, an, bn] = updated(m, v, a, b, xs);
  return {2 * an, mn, std::sqrt(bn * (1 + vn) / an)};
}

}  // namespace

TEST_CASE("ExactSum: a value added and taken away leaves the sum exactly as it was, in any order") {
  stdlib::ExactSum s;
  for (double x : {1e16, 1.0, -1e16}) s.add(x);
  CHECK(s.value() == 1.0);  // a running double sum gives 0
  stdlib::ExactSum t;
  for (double x : {0.1, 0.2, 0.3}) t.add(x);
  CHECK(t.value() == 0.6);  // correctly rounded: 0.1 + 0.2 + 0.3 in doubles is 0.6000000000000001
  const stdlib::ExactSum before = t;
  Rng rng(kSeed);
  std::vector<double> xs;
  for (int i = 0; i < 1000; ++i) xs.push_back(rng.normal() * std::pow(10.0, static_cast<double>(rng.below(30)) - 15));
  for (double x : xs) t.add(x);
  CHECK_FALSE(t == before);
  for (size_t i = xs.size(); i-- > 0;) t.add(-xs[(i * 7) % xs.size()]);  // another order
  CHECK(t.value() == before.value());
  stdlib::ExactSum halfway;  // 1 + 2^-53 is halfway between two doubles, and a tail past it rounds it up
  for (double x : {1.0, 0x1p-53, 0x1p-80}) halfway.add(x);
  CHECK(halfway.value() == 1 + 0x1p-52);
  stdlib::ExactSum tie;  // exactly halfway: to even
  for (double x : {1.0, 0x1p-53}) tie.add(x);
  CHECK(tie.value() == 1.0);
}

TEST_CASE("nig_normal predictive, statistics and exchangeability") {
  Nig g = make_nig(0.5, 2, 3, 1.5);
  CHECK_FALSE(builtin_sp("make_nig_normal").is_random());
  CHECK(g.sp().is_random());
  const std::vector<double> xs{1.2, -0.3, 2.5, 0.9, 1.1, 3.0, -1.4};
  auto fresh = g.aux().clone();
  double sequential = 0;
  std::vector<double> seen;
  for (double x : xs) {
    const ScaledT t = predictive(0.5, 2, 3, 1.5, seen);
    CHECK(g.call().log_density(num(x)) == doctest::Approx(std::log(t.pdf(x))).epsilon(1e-12));
    sequential += g.call().log_density(num(x));
    g.add(x);
    seen.push_back(x);
  }
  CHECK(g.aux().to_string() == "n 7, sum 7, sum of squares 20.76");
  // Any order gives the marginal likelihood.
  CHECK(sequential == doctest::Approx(log_marginal(0.5, 2, 3, 1.5, xs)).epsilon(1e-12));
  // Taken away in another order, the statistics are exactly as they were.
  for (double x : {3.0, 0.9, -1.4, 1.2, 2.5, -0.3, 1.1}) g.remove(x);
  CHECK(g.aux().equals(*fresh));
  // Not a number, or so large that its square overflows: density 0, never counted.
  for (const Value& x : {Value(true), vec({1}), num(kInf), num(std::nan("")), num(1e200)}) {
    CAPTURE(to_string(x));
    CHECK(g.call().log_density(x) == -kInf);
    g.sp().incorporate(x, g.call().args());
    CHECK(g.aux().equals(*fresh));
  }
}

TEST_CASE("nig_normal draws follow the Student-t predictive, whose density integrates to 1") {
  Nig g = make_nig(-1, 0.5, 2.5, 3);
  const std::vector<double> xs{0.4, 1.9, 1.3};
  for (double x : xs) g.add(x);
  const ScaledT t = predictive(-1, 0.5, 2.5, 3, xs);
  auto density = [&](double x) { return std::exp(g.call().log_density(num(x))); };
  boost::math::quadrature::tanh_sinh<double> quad;
  CHECK(quad.integrate(density, -kInf, kInf) == doctest::Approx(1.0).epsilon(1e-6));
  std::vector<double> draws_of;
  for (const Value& v : draws(g.sp(), {}, &g.aux())) draws_of.push_back(std::get<double>(v));
  std::sort(draws_of.begin(), draws_of.end());
  const double p = ks_p_value(draws_of, t);
  CAPTURE(p);
  CHECK(p > kMinPValue);
  // Against the predictive of a prior with a mean 1 higher, the draws fail.
  ScaledT shifted = t;
  shifted.loc += 1;
  CHECK(ks_p_value(draws_of, shifted) < kMinPValue);
}

// Every positive finite parameter, however large or small: the scale was b (1 + V) / a in doubles, which overflowed
// (b = 1e300, a = 1e-300) into draws of inf and densities of -inf for every value.
TEST_CASE("nig_normal with extreme parameters draws in its support and scores its draws finitely") {
  for (const auto& [m, v, a, b] : {std::array{0.0, 1e-320, 1e-300, 1e300}, std::array{1e149, 1.0, 1.0, 1.0},
                                   std::array{-3.0, 1e300, 1e300, 1e-300}, std::array{0.0, 1.0, 1e-10, 1e-10}}) {
    CAPTURE(m);
    CAPTURE(a);
    Nig g = make_nig(m, v, a, b);
    Rng rng(kSeed);
    for (int i = 0; i < 200; ++i) {
      const Value x = g.call().simulate(rng);
      CAPTURE(to_string(x));
      REQUIRE(std::isfinite(std::get<double>(x)));
      CHECK(std::abs(std::get<double>(x)) < 1e150);
      CHECK(std::isfinite(g.call().log_density(x)));
    }
  }
  // Far in the tail the density is the t's power law (2 degrees of freedom, scale^2 2 here), not 0, which its value
  // underflows to: log Gamma(3/2) - log(4 pi) / 2 - 3/2 log(1 + z^2 / 4).
  Nig g = make_nig(0, 1, 1, 1);
  const double far = 1e149;
  const double expected = std::lgamma(1.5) - 0.5 * std::log(4 * std::numbers::pi) - 1.5 * std::log1p(far * far / 4);
  CHECK(g.call().log_density(num(far)) == doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("make_nig_normal absorbs a change of its parameters: it weighs the draws at once and sets them") {
  const Sp& maker = builtin_sp("make_nig_normal");
  for (size_t i = 0; i < 4; ++i) CHECK(maker.can_absorb(i));
  Nig g = make_nig(0, 1, 1, 1);
  const std::vector<double> xs{0.3, -0.8, 1.7, 0.2};
  for (double x : xs) g.add(x);
  CHECK(Call(maker, {num(1), num(3), num(2), num(0.5)}).log_density(g.proc) ==
        doctest::Approx(log_marginal(1, 3, 2, 0.5, xs)).epsilon(1e-12));
  CHECK(Call(maker, {num(1), num(-3), num(2), num(0.5)}).log_density(g.proc) == -kInf);
  CHECK(Call(maker, {num(kInf), num(3), num(2), num(0.5)}).log_density(g.proc) == -kInf);
  auto before = g.aux().clone();
  maker.incorporate(g.proc, Call(maker, {num(1), num(3), num(2), num(0.5)}).args());
  const ScaledT t = predictive(1, 3, 2, 0.5, xs);
  CHECK(g.call().log_density(num(0.7)) == doctest::Approx(std::log(t.pdf(0.7))).epsilon(1e-12));
  maker.incorporate(g.proc, Call(maker, {num(0), num(1), num(1), num(1)}).args());  // a rejected move puts them back
  CHECK(g.aux().equals(*before));
  Nig empty = make_nig(0, 1, 1, 1);
  CHECK(Call(maker, {num(5), num(2), num(3), num(4)}).log_density(empty.proc) == 0);
}

TEST_CASE("nig_normal errors") {
  Rng rng(kSeed);
  const Sp& maker = builtin_sp("make_nig_normal");
  check_error([&] { Call(maker, {num(kInf), num(1), num(1), num(1)}).simulate(rng); }, ErrorKind::kDomain,
              "make_nig_normal: argument 1 (m) is inf, but must be between -1e150 and 1e150");
  check_error([&] { Call(maker, {num(1e200), num(1), num(1), num(1)}).simulate(rng); }, ErrorKind::kDomain,
              "make_nig_normal: argument 1 (m) is 1e+200, but must be between -1e150 and 1e150");
  check_error([&] { Call(maker, {num(0), num(0), num(1), num(1)}).simulate(rng); }, ErrorKind::kDomain,
              "make_nig_normal: argument 2 (V) is 0, but must be positive");
  check_error([&] { Call(maker, {num(0), num(1), num(-1), num(1)}).simulate(rng); }, ErrorKind::kDomain,
              "make_nig_normal: argument 3 (a) is -1, but must be positive");
  check_error([&] { Call(maker, {num(0), num(1), num(1), num(kInf)}).simulate(rng); }, ErrorKind::kDomain,
              "make_nig_normal: argument 4 (b) is inf, but must be finite");
  check_error([&] { Call(maker, {num(0), num(1), num(1)}).simulate(rng); }, ErrorKind::kArity,
              "make_nig_normal: expected 4 arguments, got 3");
  check_error([&] { Call(maker, {Value(true), num(1), num(1), vec({1})}).simulate(rng); }, ErrorKind::kType,
              "make_nig_normal: argument 4 (b) must be a number, got a vector");
  Nig g = make_nig(0, 1, 1, 1);
  check_error([&] { Call(g.sp(), {num(1)}, &g.aux()).simulate(rng); }, ErrorKind::kArity,
              "nig_normal: expected 0 arguments, got 1");
  try {  // unincorporating a draw that was never incorporated is a bug in the caller, not a user error
    g.remove(1.0);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kInternal);
  }
}

}  // namespace vnt::test
