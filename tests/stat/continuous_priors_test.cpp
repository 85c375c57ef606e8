// The continuous distributions as priors moved by drift MH: exponential (conjugate to a Poisson rate), lognormal
// (normal in log space), and laplace and student_t priors under normal data (their posteriors by quadrature).
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/gamma.hpp>
#include <boost/math/distributions/lognormal.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/support/run_program.hpp"
#include "tests/support/stat_extra.hpp"

// Tolerances: means within 4 sd / sqrt(ESS) of the exact value, sds within 4 of their standard errors, KS p-values
// >= 1e-4. Each test also rejects what a kernel that scored the prior wrongly would give.

namespace vnt::test::continuous_priors_tests {
namespace {

constexpr size_t kBurnIn = 500;
constexpr double kInf = std::numeric_limits<double>::infinity();

// The exact posterior moments of x under prior log density `log_prior` and normal observations ys of sd `sd`.
template <class LogPrior>
Moments posterior_by_quadrature(LogPrior&& log_prior, const std::vector<double>& ys, double sd) {
  auto log_post = [&](double x) {
    double lp = log_prior(x);
    for (double y : ys) lp += log_normal_pdf(y, x, sd);
    return lp;
  };
  const double top = log_post(0.0);  // near enough the mode for nothing to underflow
  return moments_1d([&](double x) { return log_post(x) - top; }, -kInf, kInf);
}

}  // namespace

TEST_CASE("exponential prior on a Poisson rate: drift MH reaches the gamma posterior") {
  // lambda ~ exponential(1.5) = gamma(1, rate 1.5); counts 3 5 2 4 6 3 (sum 23): posterior gamma(24, rate 7.5),
  // mean 3.2, sd 0.653.
  ProgramRun run(R"(
[assume lambda (exponential 1.5)]
[observe (poisson lambda) 3] [observe (poisson lambda) 5] [observe (poisson lambda) 2]
[observe (poisson lambda) 4] [observe (poisson lambda) 6] [observe (poisson lambda) 3]
[infer (repeat 20000 (do (mh default one 'drift 1.0 2) (collect lambda)))]
)",
                 41);
  const std::vector<double> lambda = run.column("lambda", kBurnIn);
  const boost::math::gamma_distribution<> exact(24, 1 / 7.5);
  const double sd = boost::math::standard_deviation(exact);
  check_mean(lambda, boost::math::mean(exact), sd);
  check_sd(lambda, sd);
  check_ks(lambda, [&](double x) { return boost::math::cdf(exact, x); });
  // An exponential of rate 1 (the rate ignored): gamma(24, rate 7), mean 3.43.
  expect_rejected(evaluate_mean(lambda, 24.0 / 7, sd));
}

TEST_CASE("lognormal prior: drift MH reaches the lognormal posterior") {
  // s ~ lognormal(0, 0.5), so log s ~ normal(0, 0.5); (log s) observed at 0.8 and 1.1 with sd 1. Posterior of
  // log s: precision 4 + 2 = 6, mean (0.8 + 1.1) / 6; s is lognormal of those.
  ProgramRun run(R"(
[assume s (lognormal 0 0.5)]
[observe (normal (log s) 1) 0.8]
[observe (normal (log s) 1) 1.1]
[infer (repeat 20000 (do (mh default one 'drift 0.4 2) (collect s)))]
)",
                 42);
  const std::vector<double> s = run.column("s", kBurnIn);
  const boost::math::lognormal_distribution<> exact(1.9 / 6, std::sqrt(1.0 / 6));
  const double sd = boost::math::standard_deviation(exact);
  check_mean(s, boost::math::mean(exact), sd);
  check_sd(s, sd);
  check_ks(s, [&](double x) { return boost::math::cdf(exact, x); });
  // The prior's scale read as a variance (lognormal(0, 0.25)): log s's posterior mean 1.9 / 18, s's mean 1.15.
  const boost::math::lognormal_distribution<> misread(1.9 / 18, std::sqrt(1.0 / 18));
  expect_rejected(evaluate_ks(s, [&](double x) { return boost::math::cdf(misread, x); }));
}

TEST_CASE("laplace prior under normal data: drift MH reaches the posterior by quadrature") {
  // x ~ laplace(0, 0.7), three observations of sd 0.8: the kink at 0 pulls the posterior towards it.
  const std::vector<double> ys = {1.4, 0.6, 1.9};
  ProgramRun run(R"(
[assume x (laplace 0 0.7)]
[observe (normal x 0.8) 1.4] [observe (normal x 0.8) 0.6] [observe (normal x 0.8) 1.9]
[infer (repeat 20000 (do (mh default one 'drift 0.6 2) (collect x)))]
)",
                 43);
  const Moments exact = posterior_by_quadrature([](double x) { return -std::abs(x) / 0.7; }, ys, 0.8);
  MESSAGE("exact: mean " << exact.mean << ", sd " << exact.sd);
  const std::vector<double> x = run.column("x", kBurnIn);
  check_mean(x, exact.mean, exact.sd);
  check_sd(x, exact.sd);
  // A normal prior of the same scale in its place (sd 0.7 * sqrt 2).
  const Moments normal = posterior_by_quadrature([](double v) { return log_normal_pdf(v, 0, 0.7 * std::sqrt(2)); },
                                                 ys, 0.8);
  expect_rejected(evaluate_mean(x, normal.mean, exact.sd));
}

TEST_CASE("student_t prior under normal data: drift MH reaches the posterior by quadrature") {
  // x ~ student_t(3, 0.5, 0.6), two observations far in its tail: heavy tails let the data win.
  const std::vector<double> ys = {3.1, 3.6};
  ProgramRun run(R"(
[assume x (student_t 3 0.5 0.6)]
[observe (normal x 0.9) 3.1] [observe (normal x 0.9) 3.6]
[infer (repeat 20000 (do (mh default one 'drift 0.8 2) (collect x)))]
)",
                 44);
  auto log_t = [](double v) { return -2.0 * std::log1p((v - 0.5) * (v - 0.5) / (3 * 0.36)); };
  const Moments exact = posterior_by_quadrature(log_t, ys, 0.9);
  MESSAGE("exact: mean " << exact.mean << ", sd " << exact.sd);
  const std::vector<double> x = run.column("x", kBurnIn);
  check_mean(x, exact.mean, exact.sd);
  check_sd(x, exact.sd);
  // Its scale ignored (student_t(3, 0.5, 1)).
  auto unscaled = [](double v) { return -2.0 * std::log1p((v - 0.5) * (v - 0.5) / 3); };
  expect_rejected(evaluate_mean(x, posterior_by_quadrature(unscaled, ys, 0.9).mean, exact.sd));
}

}  // namespace vnt::test::continuous_priors_tests
