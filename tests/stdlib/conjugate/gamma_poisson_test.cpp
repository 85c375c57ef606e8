// make_gamma_poisson: the negative binomial predictive (with and without exposures), exchangeability (sequence =
// marginal likelihood), draws, exact statistics (restored bit for bit), absorbing a change of the prior's
// parameters, extremes, errors.
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
  Call call_at(double t) const { return Call(sp(), {num(t)}, &aux()); }
  void add(double x) const { sp().incorporate(num(x), call().args()); }
  void remove(double x) const { sp().unincorporate(num(x), call().args()); }
  void add_at(double x, double t) const { sp().incorporate(num(x), call_at(t).args()); }
  void remove_at(double x, double t) const { sp().unincorporate(num(x), call_at(t).args()); }
};

Counts make_counts(double a, double b) {
  Rng rng(kSeed);
  return {Call(builtin_sp("make_gamma_poisson"), {num(a), num(b)}).simulate(rng)};
}

/// The predictive at exposure t after xs (each at exposure 1, or at ts): negative binomial with a + sum successes
/// and success probability (b + T) / (b + T + t), T the sum of the exposures.
boost::math::negative_binomial_distribution<double> predictive(double a, double b, const std::vector<double>& xs,
                                                               const std::vector<double>& ts = {}, double t = 1) {
  double total = 0, s = 0;
  for (size_t i = 0; i < xs.size(); ++i) total += ts.empty() ? 1 : ts[i], s += xs[i];
  return boost::math::negative_binomial_distribution<double>(a + s, (b + total) / (b + total + t));
}

/// log p(xs) under the prior, from the textbook form: Gamma(a + s) / Gamma(a) b^a / (b + T)^(a + s) prod t^x / x!.
double log_marginal(double a, double b, const std::vector<double>& xs, const std::vector<double>& ts = {}) {
  double total = 0, s = 0, base = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double t = ts.empty() ? 1 : ts[i];
    total += t, s += xs[i], base += xs[i] * std::log(t) - std::lgamma(xs[i] + 1);
  }
  return std::lgamma(a + s) - std::lgamma(a) + a * std::log(b) - (a + s) * std::log(b + total) + base;
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
  CHECK(c.aux().to_string() == "n 7, sum 26, exposure 7");
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

// An exposure t (a time, a population): the count is Poisson of the rate times t, and the rate's posterior gains
// the counts and the exposures (the pumps of George, Makov and Smith, 1993).
TEST_CASE("gamma_poisson with exposures: predictive, exchangeability and draws") {
  Counts c = make_counts(1.4, 0.9);
  auto fresh = c.aux().clone();
  const std::vector<double> xs{5, 1, 5, 14, 3, 19, 1, 1, 4, 22};
  const std::vector<double> ts{94.3, 15.7, 62.9, 126, 5.24, 31.4, 1.05, 1.05, 2.1, 10.5};
  double sequential = 0;
  std::vector<double> seen_x, seen_t;
  for (size_t i = 0; i < xs.size(); ++i) {
    const auto nb = predictive(1.4, 0.9, seen_x, seen_t, ts[i]);
    for (double k : {0.0, 3.0, xs[i]})
      CHECK(c.call_at(ts[i]).log_density(num(k)) == doctest::Approx(std::log(pdf(nb, k))).epsilon(1e-12));
    sequential += c.call_at(ts[i]).log_density(num(xs[i]));
    c.add_at(xs[i], ts[i]);
    seen_x.push_back(xs[i]);
    seen_t.push_back(ts[i]);
  }
  CHECK(sequential == doctest::Approx(log_marginal(1.4, 0.9, xs, ts)).epsilon(1e-12));
  CHECK(Call(builtin_sp("make_gamma_poisson"), {num(2), num(0.5)}).log_density(c.proc) ==
        doctest::Approx(log_marginal(2, 0.5, xs, ts)).epsilon(1e-12));
  // An exposure of 1 is the default.
  CHECK(c.call_at(1).log_density(num(2)) == c.call().log_density(num(2)));
  // Draws at exposure 3 follow the predictive there.
  const auto at3 = predictive(1.4, 0.9, xs, ts, 3);
  check_discrete(
      c.sp(), {num(3)}, count_range(0, 40), [&](double k) { return pdf(at3, k); }, &c.aux());
  for (size_t i = xs.size(); i-- > 0;) c.remove_at(xs[(i * 3) % xs.size()], ts[(i * 3) % xs.size()]);
  CHECK(c.aux().equals(*fresh));
  // An exposure that is not positive, or past 1e150: probability zero, never counted.
  for (double t : {0.0, -1.0, kInf, 1e200, std::nan("")}) {
    CAPTURE(t);
    CHECK(c.call_at(t).log_density(num(1)) == -kInf);
    c.sp().incorporate(num(1), c.call_at(t).args());
    CHECK(c.aux().equals(*fresh));
  }
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
  check_error([&] { Call(c.sp(), {num(1), num(2)}, &c.aux()).simulate(rng); }, ErrorKind::kArity,
              "gamma_poisson: expected 0 to 1 arguments, got 2");
  check_error([&] { Call(c.sp(), {num(0)}, &c.aux()).simulate(rng); }, ErrorKind::kDomain,
              "gamma_poisson: argument 1 (exposure) is 0, but must be positive");
  check_error([&] { Call(c.sp(), {num(1e200)}, &c.aux()).simulate(rng); }, ErrorKind::kDomain,
              "gamma_poisson: argument 1 (exposure) is 1e+200, but must be at most 1e150");
  check_error([&] { Call(c.sp(), {vec({1})}, &c.aux()).simulate(rng); }, ErrorKind::kType,
              "gamma_poisson: argument 1 (exposure) must be a number, got a vector");
  try {  // unincorporating a draw that was never incorporated is a bug in the caller, not a user error
    c.remove(1.0);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kInternal);
  }
}

}  // namespace vnt::test
