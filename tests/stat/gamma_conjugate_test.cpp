// Gamma-family conjugate posteriors: a Poisson rate with a gamma prior (resimulation and drift MH), and a
// normal variance with an inverse-gamma prior.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/gamma.hpp>
#include <boost/math/distributions/inverse_gamma.hpp>

#include <cmath>
#include <string>

#include "tests/support/run_program.hpp"
#include "tests/support/stat_extra.hpp"

// Tolerances: means within 4 sd / sqrt(ESS) of the exact value, sds within 4 of their standard errors
// (widened by the sample kurtosis, which matters for the skewed inverse gamma), KS p-values >= 1e-4.

namespace vnt::test::gamma_conjugate_tests {
namespace {

constexpr size_t kBurnIn = 500;

// lambda ~ gamma(shape 2, rate 1); six counts 3 5 2 4 6 3 (sum 23). Posterior gamma(2 + 23, 1 + 6) =
// gamma(25, rate 7): mean 3.571, sd 0.714.
constexpr const char* kPoisson = R"(
[assume lambda (gamma 2 1)]
[observe (poisson lambda) 3] [observe (poisson lambda) 5] [observe (poisson lambda) 2]
[observe (poisson lambda) 4] [observe (poisson lambda) 6] [observe (poisson lambda) 3]
)";

void check_gamma_posterior(const std::string& infer, uint64_t seed) {
  ProgramRun run(std::string(kPoisson) + infer, seed);
  const std::vector<double> lambda = run.column("lambda", kBurnIn);
  const boost::math::gamma_distribution<> exact(25, 1.0 / 7);  // Boost takes the scale, 1 / rate
  const double sd = boost::math::standard_deviation(exact);
  check_mean(lambda, boost::math::mean(exact), sd);
  check_sd(lambda, sd);
  check_ks(lambda, [&](double x) { return boost::math::cdf(exact, x); });
  // What would fail: the prior mean 2; the sample mean of the counts 23 / 6 = 3.83 (prior dropped); and,
  // by KS, the posterior with the last count missing, gamma(22, rate 6) (mean 3.67, close to the truth).
  expect_rejected(evaluate_mean(lambda, 2.0, sd));
  expect_rejected(evaluate_mean(lambda, 23.0 / 6, sd));
  const boost::math::gamma_distribution<> one_short(22, 1.0 / 6);
  expect_rejected(evaluate_ks(lambda, [&](double x) { return boost::math::cdf(one_short, x); }));
}

TEST_CASE("gamma-poisson: resimulation MH reaches the gamma posterior") {
  check_gamma_posterior("[infer (repeat 20000 (do (mh default one 2) (collect lambda)))]", 31);
}

TEST_CASE("gamma-poisson: drift MH reaches the gamma posterior") {
  // Drift proposals below 0 have density zero and are rejected.
  check_gamma_posterior("[infer (repeat 20000 (do (mh default one 'drift 1.0 2) (collect lambda)))]", 32);
}

TEST_CASE("inverse-gamma variance of normal data: resimulation MH reaches the conjugate posterior") {
  // v ~ inv_gamma(shape 3, scale 2); eight observations y_i ~ normal(0, sqrt(v)) with sum y^2 = 9.74.
  // Posterior inv_gamma(3 + 8 / 2, 2 + 9.74 / 2) = inv_gamma(7, 6.87): mean 1.145, sd 0.512.
  const std::string program = R"(
[assume v (inv_gamma 3 2)]
[observe (normal 0 (sqrt v)) 1.2]  [observe (normal 0 (sqrt v)) -0.7] [observe (normal 0 (sqrt v)) 0.3]
[observe (normal 0 (sqrt v)) -1.9] [observe (normal 0 (sqrt v)) 0.8]  [observe (normal 0 (sqrt v)) -1.1]
[observe (normal 0 (sqrt v)) 1.5]  [observe (normal 0 (sqrt v)) 0.1]
[infer (repeat 20000 (do (mh default one 2) (collect v)))]
)";
  double sum_sq = 0;
  for (double y : {1.2, -0.7, 0.3, -1.9, 0.8, -1.1, 1.5, 0.1}) sum_sq += y * y;
  const boost::math::inverse_gamma_distribution<> exact(3 + 8 / 2.0, 2 + sum_sq / 2);
  const double sd = boost::math::standard_deviation(exact);
  ProgramRun run(program, 33);
  const std::vector<double> v = run.column("v", kBurnIn);
  check_mean(v, boost::math::mean(exact), sd);
  check_sd(v, sd);
  check_ks(v, [&](double x) { return boost::math::cdf(exact, x); });
  // What would fail: the prior mean 1; a shape update of n instead of n / 2 (inv_gamma(11, 6.87), mean
  // 0.687); and, by KS, a scale update of sum y^2 instead of sum y^2 / 2 (inv_gamma(7, 11.74)).
  expect_rejected(evaluate_mean(v, 1.0, sd));
  const boost::math::inverse_gamma_distribution<> shape_n(3 + 8.0, 2 + sum_sq / 2), scale_twice(7, 2 + sum_sq);
  expect_rejected(evaluate_mean(v, boost::math::mean(shape_n), sd));
  expect_rejected(evaluate_ks(v, [&](double x) { return boost::math::cdf(scale_twice, x); }));
}

}  // namespace
}  // namespace vnt::test::gamma_conjugate_tests
