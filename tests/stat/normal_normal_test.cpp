// Posterior checks on Gaussian conjugate models: one unknown mean under resimulation and drift MH, and a
// two-level model under block (all) resimulation, each against its closed-form posterior.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/normal.hpp>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <string>

#include "tests/support/run_program.hpp"
#include "tests/support/stat_extra.hpp"

// Tolerances (all checks): the sample mean must be within 4 posterior sd / sqrt(ESS) of the exact mean,
// the sample sd within 4 standard errors sd sqrt((kurtosis - 1) / (4 ESS of squares)) of the exact sd,
// and the KS p-value against the exact cdf (with the ESS as sample size) at least 1e-4. Each check then
// fails a correct sampler with probability about 1e-4; the seeds are fixed, so the suite is deterministic.

namespace vnt::test::normal_normal_tests {
namespace {

// mu ~ normal(0, 2); five measurements y_i ~ normal(mu, 1). Posterior precision 1/4 + 5 = 5.25, mean
// (sum y) / 5.25 = 10.5 / 5.25 = 2, sd 1 / sqrt(5.25) = 0.4364.
constexpr const char* kModel = R"(
[assume mu (normal 0 2)]
[observe (normal mu 1) 2.1]
[observe (normal mu 1) 1.4]
[observe (normal mu 1) 2.9]
[observe (normal mu 1) 1.6]
[observe (normal mu 1) 2.5]
)";

struct Gaussian {
  double mean, sd;
};

Gaussian posterior(double prior_mean, double prior_sd, double noise_sd, std::initializer_list<double> ys) {
  double precision = 1 / (prior_sd * prior_sd), weighted = prior_mean / (prior_sd * prior_sd);
  for (double y : ys) {
    precision += 1 / (noise_sd * noise_sd);
    weighted += y / (noise_sd * noise_sd);
  }
  return {weighted / precision, 1 / std::sqrt(precision)};
}

constexpr size_t kBurnIn = 500;

// Runs the model with an inference line and checks mu against the conjugate posterior.
void check_unknown_mean(const std::string& infer, uint64_t seed) {
  ProgramRun run(std::string(kModel) + infer, seed);
  const std::vector<double> mu = run.column("mu", kBurnIn);
  const Gaussian post = posterior(0, 2, 1, {2.1, 1.4, 2.9, 1.6, 2.5});
  CHECK(post.mean == doctest::Approx(2.0));
  check_mean(mu, post.mean, post.sd);
  check_sd(mu, post.sd);
  const boost::math::normal_distribution<> exact(post.mean, post.sd);
  check_ks(mu, [&](double x) { return boost::math::cdf(exact, x); });

  // What would fail: the prior (mean 0, sd 2), the likelihood alone (the sample mean 2.1 of the data,
  // i.e. a sampler that dropped the prior factor), and the sd of the posterior with one observation
  // missing (1 / sqrt(4.25) = 0.485, i.e. a sampler that lost an observation's weight).
  expect_rejected(evaluate_mean(mu, 0.0, post.sd));
  expect_rejected(evaluate_mean(mu, 2.1, post.sd));
  expect_rejected(evaluate_sd(mu, 1 / std::sqrt(4.25)));
  const boost::math::normal_distribution<> likelihood_only(2.1, 1 / std::sqrt(5.0));
  expect_rejected(evaluate_ks(mu, [&](double x) { return boost::math::cdf(likelihood_only, x); }));
}

TEST_CASE("normal-normal: resimulation MH reaches the conjugate posterior") {
  // Resimulating mu from its normal(0, 2) prior accepts about a quarter of the proposals; collecting after
  // every 2 transitions gives an ESS of several thousand for 20000 rows.
  check_unknown_mean("[infer (repeat 20000 (do (mh default one 2) (collect mu)))]", 11);
}

TEST_CASE("normal-normal: drift MH reaches the same conjugate posterior") {
  check_unknown_mean("[infer (repeat 20000 (do (mh default one 'drift 0.7 2) (collect mu)))]", 12);
}

TEST_CASE("normal-normal: drift MH on a user scope reaches the same posterior") {
  // The same model with mu tagged in scope 'm, block 0, and the kernel addressing that block by value.
  const std::string tagged = R"(
[assume mu (scope_include 'm 0 (normal 0 2))]
[observe (normal mu 1) 2.1]
[observe (normal mu 1) 1.4]
[observe (normal mu 1) 2.9]
[observe (normal mu 1) 1.6]
[observe (normal mu 1) 2.5]
[infer (repeat 20000 (do (mh m 0 'drift 0.7 2) (collect mu)))]
)";
  ProgramRun run(tagged, 13);
  const std::vector<double> mu = run.column("mu", kBurnIn);
  check_mean(mu, 2.0, 1 / std::sqrt(5.25));
  check_sd(mu, 1 / std::sqrt(5.25));
  expect_rejected(evaluate_mean(mu, 2.1, 1 / std::sqrt(5.25)));  // likelihood only
}

TEST_CASE("two-level Gaussian: block resimulation (mh default all) reaches the joint posterior") {
  // a ~ normal(0, 1), b ~ normal(a, 1), y1 ~ normal(a, 1) = 0.8, y2 ~ normal(b, 0.5) = 1.5. The posterior of
  // (a, b) is Gaussian with precision L = [[1 + 1 + 1, -1], [-1, 1 + 4]] and mean L^-1 [0.8, 4 * 1.5].
  // (mh default all) resimulates a and b together from the prior (an independence sampler), so the
  // acceptance ratio is the likelihood ratio and the index correction is zero.
  const std::string program = R"(
[assume a (normal 0 1)]
[assume b (normal a 1)]
[observe (normal a 1) 0.8]
[observe (normal b 0.5) 1.5]
[infer (repeat 20000 (do (mh default all 2) (collect a b)))]
)";
  Eigen::Matrix2d precision;
  precision << 3, -1, -1, 5;
  const Eigen::Matrix2d cov = precision.inverse();
  const Eigen::Vector2d m = cov * Eigen::Vector2d(0.8, 6.0);
  ProgramRun run(program, 14);
  const std::vector<double> a = run.column("a", kBurnIn), b = run.column("b", kBurnIn);
  const double sd_a = std::sqrt(cov(0, 0)), sd_b = std::sqrt(cov(1, 1));
  check_mean(a, m[0], sd_a);
  check_mean(b, m[1], sd_b);
  check_sd(a, sd_a);
  check_sd(b, sd_b);
  check_correlation(a, b, cov(0, 1) / (sd_a * sd_b));
  // What would fail: b centred on the posterior mean of a (the y2 factor ignored), and a correlation of 0
  // (the exact one is 1 / sqrt(15) = 0.26; a sampler that lost the edge from a to b would give 0).
  expect_rejected(evaluate_mean(b, m[0], sd_b));
  expect_rejected(evaluate_correlation(a, b, 0.0));
}

TEST_CASE("latent choices inside observed applications: the noise is integrated out by MH") {
  // Each observation (noisy mu) draws its own latent offset normal(0, 0.5) inside the procedure, so
  // marginally y_i ~ normal(mu, sqrt(1 + 0.25)); single-site MH must move mu and the three latent offsets.
  // Posterior of mu: precision 1 + 3 / 1.25, mean (3.5 / 1.25) / precision = 0.824, sd 0.542.
  const std::string program = R"(
[assume mu (normal 0 1)]
[assume noisy (lambda (m) (normal (+ m (normal 0 0.5)) 1))]
[observe (noisy mu) 1.0]
[observe (noisy mu) 2.0]
[observe (noisy mu) 0.5]
[infer (repeat 20000 (do (mh default one 4) (collect mu)))]
)";
  const double precision = 1 + 3 / 1.25, mean = 3.5 / 1.25 / precision, sd = 1 / std::sqrt(precision);
  ProgramRun run(program, 15);
  const std::vector<double> mu = run.column("mu", kBurnIn);
  check_mean(mu, mean, sd);
  check_sd(mu, sd);
  // What would fail: the posterior without the latent noise (noise sd 1 instead of sqrt 1.25: sd 0.5), and
  // the prior (mean 0).
  expect_rejected(evaluate_sd(mu, 0.5));
  expect_rejected(evaluate_mean(mu, 0, sd));
}

TEST_CASE("uniform prior with drift MH: truncated normal posterior") {
  // u ~ uniform_continuous(0, 2), y ~ normal(u, 0.5) = 1.8: the posterior is normal(1.8, 0.5) truncated to
  // [0, 2]. Drift proposals beyond 2 must be rejected (density zero), not clipped or reflected.
  const std::string program = R"(
[assume u (uniform_continuous 0 2)]
[observe (normal u 0.5) 1.8]
[infer (repeat 20000 (do (mh default one 'drift 0.5 2) (collect u)))]
)";
  const boost::math::normal_distribution<> untruncated(1.8, 0.5);
  const double lo = boost::math::cdf(untruncated, 0.0), hi = boost::math::cdf(untruncated, 2.0);
  auto cdf = [&](double x) { return (boost::math::cdf(untruncated, std::clamp(x, 0.0, 2.0)) - lo) / (hi - lo); };
  const double a = (0 - 1.8) / 0.5, b = (2 - 1.8) / 0.5;
  const boost::math::normal_distribution<> std_normal;
  const double z = boost::math::cdf(std_normal, b) - boost::math::cdf(std_normal, a);
  const double mean = 1.8 + 0.5 * (boost::math::pdf(std_normal, a) - boost::math::pdf(std_normal, b)) / z;
  const double var = 0.25 * (1 + (a * boost::math::pdf(std_normal, a) - b * boost::math::pdf(std_normal, b)) / z -
                             std::pow((boost::math::pdf(std_normal, a) - boost::math::pdf(std_normal, b)) / z, 2));
  ProgramRun run(program, 16);
  const std::vector<double> u = run.column("u", kBurnIn);
  CHECK(std::all_of(u.begin(), u.end(), [](double x) { return x >= 0 && x <= 2; }));
  check_mean(u, mean, std::sqrt(var));
  check_sd(u, std::sqrt(var));
  check_ks(u, cdf);
  // What would fail: the untruncated mean 1.8 (proposals above 2 clipped to 2 would pile mass at the
  // boundary and also push the mean up), and the prior mean 1.
  expect_rejected(evaluate_mean(u, 1.8, std::sqrt(var)));
  expect_rejected(evaluate_mean(u, 1.0, std::sqrt(var)));
}

}  // namespace
}  // namespace vnt::test::normal_normal_tests
