// make_gamma_poisson: the negative binomial predictive, exchangeability (sequence = marginal likelihood), draws,
// exact statistics (restored bit for bit), absorbing a change of the prior's parameters, extremes, errors.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/negative_binomial.hpp>

#include "tests/support/dist_conformance.hpp"

namespace vnt::test {
namespace {

struct Counts {
  Value proc;
  const Sp& sp() const { return procedure(proc).sp(); }
  SpAux& aux() const { return *procedure(proc).aux(); }
  Call call() const { return Call(sp(), {}, &aux()); }
  void add(double x) const { sp().incorporate(num(x), call().args()); }
  void remove(double x) const { sp().unincorporate(num(x), call().args()); }
};

Counts make_counts(double a, double b) {
  Rng rng(kSeed);
  return {Call(builtin_sp("make_gamma_poisson"), {num(a), num(b)}).simulate(rng)};
}

/// The predictive after xs: negative binomial with a + sum successes and success probability (b + n) / (b + n + 1).
boost::math::negative_binomial_distribution<double> predictive(double a, double b, const std::vector<double>& xs) {
  double n = 0, s = 0;
  for (double x : xs) n += 1, s += x;
  return boost::math::negative_binomial_distribution<double>(a + s, (b + n) / (b + n + 1));
}

/// log p(xs) under the prior, from the textbook form: Gamma(a + s) / Gamma(a) b^a / (b + n)^(a + s) / prod x!.
double log_marginal(double a, double b, const std::vector<double>& xs) {
  double n = 0, s = 0, log_fact = 0;
  for (double x : xs) n += 1, s += x, log_fact += std::lgamma(x + 1);
  return std::lgamma(a + s) - std::lgamma(a) + a * std::log(b) - (a + s) * std::log(b + n) - log_fact;
}

}  // namespace

TEST_CASE("gamma_poisson predictive, statistics and exchangeability") {
  Counts c = make_counts(2.5, 0.7);
  CHECK_FALSE(builtin_sp("make_gamma_poisson").is_random());
  CHECK(c.sp().is_random());
  const std::vector<double> xs{3, 0, 7, 2, 2, 11, 1};
  auto fresh = c.aux().clone();
  double sequential = 0;
  std::vector<double> seen;
  for (double x : xs) {
    const auto nb = predictive(2.5, 0.7, seen);
    for (double k : {0.0, 1.0, 4.0, 30.0})
      CHECK(c.call().log_density(num(k)) == doctest::Approx(std::log(pdf(nb, k))).epsilon(1e-12));
    sequential += c.call().log_density(num(x));
    c.add(x);
    seen.push_back(x);
  }
  CHECK(c.aux().to_string() == "n 7, sum 26");
  // Any order gives the marginal likelihood.
  CHECK(sequential == doctest::Approx(log_marginal(2.5, 0.7, xs)).epsilon(1e-12));
  // Taken away in another order, the statistics are exactly as they were.
  for (double x : {11.0, 2.0, 0.0, 3.0, 1.0, 7.0, 2.0}) c.remove(x);
  CHECK(c.aux().equals(*fresh));
  // Not a count (negative, fractional, boolean, past 2^53): density 0, never counted.
  for (const Value& x : {num(-1), num(0.5), Value(true), vec({1}), num(kInf), num(std::nan("")), num(1e17)}) {
    CAPTURE(to_string(x));
    CHECK(c.call().log_density(x) == -kInf);
    c.sp().incorporate(x, c.call().args());
    CHECK(c.aux().equals(*fresh));
  }
  CHECK_FALSE(c.sp().enumerate(c.call().args()).has_value());  // infinitely many counts: not for gibbs
}

TEST_CASE("gamma_poisson draws follow the negative binomial predictive") {
  Counts c = make_counts(1.5, 2);
  auto prior = predictive(1.5, 2, {});
  check_discrete(
      c.sp(), {}, count_range(0, 40), [&](double k) { return pdf(prior, k); }, &c.aux());
  const std::vector<double> xs{4, 9, 6};
  for (double x : xs) c.add(x);
  auto post = predictive(1.5, 2, xs);
  check_discrete(
      c.sp(), {}, count_range(0, 60), [&](double k) { return pdf(post, k); }, &c.aux());
  // Against the prior's predictive, the posterior's draws fail (a negative control for the test above).
  std::vector<double> draws_of;
  for (const Value& v : draws(c.sp(), {}, &c.aux())) draws_of.push_back(std::get<double>(v));
  double mean = 0;
  for (double x : draws_of) mean += x / static_cast<double>(draws_of.size());
  CHECK(mean == doctest::Approx(boost::math::mean(post)).epsilon(0.03));
  CHECK(std::abs(mean - boost::math::mean(prior)) > 1);
}

// Every positive finite parameter, however large or small: the draws stay counts in the support, and score finitely.
TEST_CASE("gamma_poisson with extreme parameters draws in its support and scores its draws finitely") {
  for (const auto& [a, b] : {std::pair{1e-300, 1e300}, std::pair{1e300, 1e-300}, std::pair{1e300, 1.0},
                             std::pair{1e-10, 1e-10}, std::pair{5e13, 2.0}, std::pair{1e7, 1e7}}) {
    CAPTURE(a);
    CAPTURE(b);
    Counts c = make_counts(a, b);
    Rng rng(kSeed);
    for (int i = 0; i < 200; ++i) {
      const Value x = c.call().simulate(rng);
      CAPTURE(to_string(x));
      const double k = std::get<double>(x);
      REQUIRE((k >= 0 && k <= 9007199254740992.0 && k == std::floor(k)));
      CHECK(std::isfinite(c.call().log_density(x)));
      c.add(k);
    }
  }
  // A large shape and rate, where lgamma's differences cancel: the value from a 50-digit computation (mpmath) of
  // lgamma(a + x) - lgamma(a) - lgamma(x + 1) + a log(b / (b + 1)) - x log(b + 1). (Boost's negative binomial pdf
  // is 1.7e-7 off here.)
  Counts c = make_counts(1e12, 1e11);
  CHECK(c.call().log_density(num(12)) == doctest::Approx(-2.3561933797373379).epsilon(1e-13));
}

TEST_CASE("make_gamma_poisson absorbs a change of its parameters: it weighs the draws at once and sets them") {
  const Sp& maker = builtin_sp("make_gamma_poisson");
  for (size_t i = 0; i < 2; ++i) CHECK(maker.can_absorb(i));
  Counts c = make_counts(1, 1);
  const std::vector<double> xs{3, 0, 5, 2};
  for (double x : xs) c.add(x);
  CHECK(Call(maker, {num(2), num(0.5)}).log_density(c.proc) ==
        doctest::Approx(log_marginal(2, 0.5, xs)).epsilon(1e-12));
  CHECK(Call(maker, {num(-2), num(0.5)}).log_density(c.proc) == -kInf);
  CHECK(Call(maker, {num(2), num(kInf)}).log_density(c.proc) == -kInf);
  auto before = c.aux().clone();
  maker.incorporate(c.proc, Call(maker, {num(2), num(0.5)}).args());
  CHECK(c.call().log_density(num(4)) == doctest::Approx(std::log(pdf(predictive(2, 0.5, xs), 4))).epsilon(1e-12));
  maker.incorporate(c.proc, Call(maker, {num(1), num(1)}).args());  // a rejected move puts them back
  CHECK(c.aux().equals(*before));
  Counts zeros = make_counts(1, 1);  // draws that are all 0: the sum is 0
  for (int i = 0; i < 3; ++i) zeros.add(0);
  CHECK(Call(maker, {num(2), num(0.5)}).log_density(zeros.proc) ==
        doctest::Approx(log_marginal(2, 0.5, {0, 0, 0})).epsilon(1e-12));
  Counts empty = make_counts(1, 1);
  CHECK(Call(maker, {num(5), num(2)}).log_density(empty.proc) == 0);
}

TEST_CASE("gamma_poisson errors") {
  Rng rng(kSeed);
  const Sp& maker = builtin_sp("make_gamma_poisson");
  check_error([&] { Call(maker, {num(0), num(1)}).simulate(rng); }, ErrorKind::kDomain,
              "make_gamma_poisson: argument 1 (a) is 0, but must be positive");
  check_error([&] { Call(maker, {num(1), num(kInf)}).simulate(rng); }, ErrorKind::kDomain,
              "make_gamma_poisson: argument 2 (b) is inf, but must be finite");
  check_error([&] { Call(maker, {num(1)}).simulate(rng); }, ErrorKind::kArity,
              "make_gamma_poisson: expected 2 arguments, got 1");
  check_error([&] { Call(maker, {num(1), vec({1})}).simulate(rng); }, ErrorKind::kType,
              "make_gamma_poisson: argument 2 (b) must be a number, got a vector");
  Counts c = make_counts(1, 1);
  check_error([&] { Call(c.sp(), {num(1)}, &c.aux()).simulate(rng); }, ErrorKind::kArity,
              "gamma_poisson: expected 0 arguments, got 1");
  try {  // unincorporating a draw that was never incorporated is a bug in the caller, not a user error
    c.remove(1.0);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kInternal);
  }
}

}  // namespace vnt::test
