// The program of Fig. 1 of the sublinear-MH paper, where a coin decides whether mu is 1 or a gamma choice
// (so the set of random choices changes with b), against exact posteriors by numeric integration.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/gamma.hpp>

#include <cmath>
#include <limits>
#include <numbers>
#include <string>

#include "tests/support/run_program.hpp"
#include "tests/support/stat_extra.hpp"

// Tolerances: P(b = 1) within 4 sqrt(p (1 - p) / ESS), means within 4 sd / sqrt(ESS), sds within 4 of
// their standard errors, KS p-values >= 1e-4. Checks on mu given b = 0 use the draws with b = 0 only, and
// their own ESS (the subsequence of a chain is still a stationary sequence with that conditional law).

namespace vnt::test::branch_tests {
namespace {

double log_gamma_pdf(double x, double shape, double rate) {
  return shape * std::log(rate) - std::lgamma(shape) + (shape - 1) * std::log(x) - rate * x;
}

// The exact posterior of [b ~ bernoulli(0.5)] [mu = b ? 1 : gamma(shape, rate)] [y ~ normal(mu, sd) = y_obs]:
// p(b = 0, mu | y) is proportional to 0.5 gamma(mu) normal(y; mu, sd), integrated over mu > 0 by adaptive
// Gauss-Kronrod, and p(b = 1 | y) to 0.5 normal(y; 1, sd).
struct BranchPosterior {
  double p_b1;      // P(b = 1 | y)
  Moments gamma;    // mu given b = 0
  double mean, sd;  // mu, marginally
};

BranchPosterior branch_posterior(double shape, double rate, double sd, double y) {
  // Shift the log density by its value at the observation, so that y = 10 with sd 0.1 does not underflow.
  const double shift = log_gamma_pdf(y, shape, rate);
  auto log_joint0 = [&](double m) { return log_gamma_pdf(m, shape, rate) + log_normal_pdf(y, m, sd) - shift; };
  BranchPosterior out;
  out.gamma = moments_1d(log_joint0, 0, std::numeric_limits<double>::infinity());
  const double z1 = std::exp(log_normal_pdf(y, 1, sd) - shift);  // the factor 0.5 cancels
  out.p_b1 = z1 / (z1 + out.gamma.mass);
  const double p0 = 1 - out.p_b1, m0 = out.gamma.mean, v0 = out.gamma.sd * out.gamma.sd;
  out.mean = out.p_b1 * 1 + p0 * m0;
  out.sd = std::sqrt(out.p_b1 * 1 + p0 * (v0 + m0 * m0) - out.mean * out.mean);
  return out;
}

// The cdf of mu given b = 0, by quadrature from 0 to x (for the KS check).
auto conditional_cdf(double shape, double rate, double sd, double y) {
  const double shift = log_gamma_pdf(y, shape, rate);
  auto density = [=](double m) {
    return m <= 0 ? 0.0 : std::exp(log_gamma_pdf(m, shape, rate) + log_normal_pdf(y, m, sd) - shift);
  };
  const double mass = integrate(density, 0, std::numeric_limits<double>::infinity());
  return [=](double x) { return x <= 0 ? 0.0 : integrate(density, 0, x) / mass; };
}

constexpr size_t kBurnIn = 1000;

// The checks shared by the variants of y = 1.2 observed with sd 0.5 and mu ~ gamma(2, 2) in branch b = 0.
void check_moderate_branch(ProgramRun& run) {
  const BranchPosterior post = branch_posterior(2, 2, 0.5, 1.2);
  MESSAGE("exact: P(b = 1 | y) = " << post.p_b1 << ", E[mu | y] = " << post.mean << ", sd " << post.sd
                                   << "; given b = 0: mean " << post.gamma.mean << ", sd " << post.gamma.sd);
  const std::vector<double> b = run.column("b", kBurnIn), mu = run.column("mu", kBurnIn);
  check_probability(b, post.p_b1);
  check_mean(mu, post.mean, post.sd);
  check_sd(mu, post.sd);
  const std::vector<double> mu0 = where(mu, b, 0.0);
  check_mean(mu0, post.gamma.mean, post.gamma.sd);
  check_sd(mu0, post.gamma.sd);
  check_ks(mu0, conditional_cdf(2, 2, 0.5, 1.2));
  // What would fail: the prior P(b = 1) = 0.5; the odds of b = 1 tilted by a factor 2 either way, which is
  // what a sampler gets if it drops (or inverts) the index correction -log #choices of Eq. 3 when the number
  // of choices changes with b (2 with b = 0, 1 with b = 1); and mu given b = 0 distributed as its gamma(2, 2)
  // prior (by KS: sd 0.71 against 0.42), i.e. the observation not absorbed.
  expect_rejected(evaluate_probability(b, 0.5));
  const double odds = post.p_b1 / (1 - post.p_b1);
  expect_rejected(evaluate_probability(b, 2 * odds / (1 + 2 * odds)));
  expect_rejected(evaluate_probability(b, 0.5 * odds / (1 + 0.5 * odds)));
  const boost::math::gamma_distribution<> prior(2, 0.5);  // shape 2, scale 1 / rate
  expect_rejected(evaluate_ks(mu0, [&](double x) { return boost::math::cdf(prior, x); }));
}

TEST_CASE("Fig. 1 variant with y = 1.2 and sd 0.5: resimulation MH matches the exact posterior") {
  // Both branches carry posterior mass (P(b = 1 | y) = 0.58), so resimulating b (and the gamma choice
  // it brings into or out of existence) mixes. Single-site MH over the default scope picks among 1 or 2
  // random choices, so the index correction (Eq. 3 with the block-selection density) is exercised.
  const std::string program = R"(
[assume b (bernoulli 0.5)]
[assume mu (if b 1 (gamma 2 2))]
[assume y (normal mu 0.5)]
[observe y 1.2]
[infer (repeat 20000 (do (mh default one 2) (collect b mu)))]
)";
  ProgramRun run(program, 41);
  check_moderate_branch(run);
}

TEST_CASE("Fig. 1 with y = 1.2: block resimulation (all) mixed with single-site MH matches the same posterior") {
  // (mh default all) resimulates b and, when b = 0, the gamma choice together (no index correction);
  // the mixture picks it or single-site MH with probability 1/2 each per step.
  const std::string program = R"(
[assume b (bernoulli 0.5)]
[assume mu (if b 1 (gamma 2 2))]
[assume y (normal mu 0.5)]
[observe y 1.2]
[infer (repeat 20000 (do (mixture (1 (mh default one 1) 1 (mh default all 1)) 2) (collect b mu)))]
)";
  ProgramRun run(program, 44);
  check_moderate_branch(run);
}

TEST_CASE("a user scope whose number of blocks changes with the proposal: index correction of (mh s one)") {
  // n ~ bernoulli(0.5) is block 0 of scope 's; x is block 1 when n = 1 and the constant 0 otherwise, so
  // proposing to block 0 takes the scope from 2 blocks to 1 or back, and the acceptance ratio needs the
  // block-selection correction log(1 / #blocks after) - log(1 / #blocks before). With x observed at 0.9
  // (sd 0.5), P(n = 1 | y) is proportional to normal(0.9; 0, sqrt(1 + 0.25)) against normal(0.9; 0, 0.5)
  // for n = 0 (the prior 1/2 cancels): 0.620.
  const std::string program = R"(
[assume n (scope_include 's 0 (bernoulli 0.5))]
[assume x (if n (scope_include 's 1 (normal 0 1)) 0)]
[observe (normal x 0.5) 0.9]
[infer (repeat 20000 (do (mh s one 2) (collect n x)))]
)";
  const double e1 = std::exp(log_normal_pdf(0.9, 0, std::sqrt(1.25))), e0 = std::exp(log_normal_pdf(0.9, 0, 0.5));
  const double p1 = e1 / (e1 + e0);
  ProgramRun run(program, 45);
  const std::vector<double> n = run.column("n", kBurnIn), x = run.column("x", kBurnIn);
  check_probability(n, p1);
  // x given n = 1 is normal(0.9 / 1.25, sqrt(0.25 / 1.25)) = normal(0.72, 0.447).
  const std::vector<double> x1 = where(x, n, 1.0);
  check_mean(x1, 0.72, std::sqrt(0.2));
  check_sd(x1, std::sqrt(0.2));
  // What would fail: the odds of n = 1 tilted by the factor 2 that a dropped (or inverted) block-count
  // correction introduces, and x given n = 1 at its prior mean 0.
  const double odds = p1 / (1 - p1);
  expect_rejected(evaluate_probability(n, 2 * odds / (1 + 2 * odds)));
  expect_rejected(evaluate_probability(n, 0.5 * odds / (1 + 0.5 * odds)));
  expect_rejected(evaluate_mean(x1, 0, std::sqrt(0.2)));
}

// A choice with posterior = prior that keeps scope 'm non-empty: (mh m one ...) is an error when the scope
// has no blocks, which happens whenever b = 1 removes the gamma choice; the model of b and mu is unchanged.
TEST_CASE("Fig. 1 with the gamma choice in a scope: cycle of resimulation and drift on the scope") {
  const std::string program = R"(
[assume other (scope_include 'm 0 (normal 0 0.5))]
[assume b (bernoulli 0.5)]
[assume mu (if b 1 (scope_include 'm 1 (gamma 2 2)))]
[assume y (normal mu 0.5)]
[observe y 1.2]
[infer (repeat 20000 (do (cycle ((mh default one 1) (mh m one 'drift 0.5 1)) 2) (collect b mu other)))]
)";
  ProgramRun run(program, 42);
  check_moderate_branch(run);
  const std::vector<double> other = run.column("other", kBurnIn);
  check_mean(other, 0, 0.5);
  check_sd(other, 0.5);
}

TEST_CASE("Fig. 1 as printed (y = 10 and sd 0.1): drift on the scoped gamma choice finds the exact posterior") {
  // With y = 10 and sd 0.1, b = 1 has likelihood exp(-4050) relative to mu near 10, so P(b = 1 | y) is 0 in
  // double precision, and mu | y has density proportional to exp(-m) normal(10; m, 0.1), which is
  // normal(10 - 0.1^2, 0.1) = normal(9.99, 0.1) (the truncation at 0 is 100 sd away). Resimulating the
  // gamma(1, 1) choice from its prior almost never lands within 0.1 of 10, so this needs the drift kernel;
  // the chain must also leave b = 1 if it starts there. Burn-in 2000 rows.
  const std::string program = R"(
[assume other (scope_include 'm 0 (normal 0 0.1))]
[assume b (bernoulli 0.5)]
[assume mu (if b 1 (scope_include 'm 1 (gamma 1 1)))]
[assume y (normal mu 0.1)]
[observe y 10.0]
[infer (repeat 20000 (do (cycle ((mh default one 1) (mh m one 'drift 0.15 2)) 1) (collect b mu)))]
)";
  const BranchPosterior post = branch_posterior(1, 1, 0.1, 10.0);
  CHECK(post.p_b1 == 0.0);
  CHECK(post.gamma.mean == doctest::Approx(9.99).epsilon(1e-9));
  CHECK(post.gamma.sd == doctest::Approx(0.1).epsilon(1e-7));
  ProgramRun run(program, 43);
  const std::vector<double> b = run.column("b", 2000), mu = run.column("mu", 2000);
  check_probability(b, 0.0);  // tolerance 0: every draw after burn-in must have b = 0
  check_mean(mu, post.mean, post.sd);
  check_sd(mu, post.sd);
  // What would fail: the likelihood alone (mean 10, i.e. the gamma prior factor exp(-m) lost), and any
  // chain still stuck below 10 after burn-in (as resimulation alone is: its mu has ESS ~3).
  expect_rejected(evaluate_mean(mu, 10.0, post.sd));
}

TEST_CASE("exact mh through local sections counts the random choices its sections' brush makes or drops") {
  // b is read twice (by a's branch and by the observation), so the partitioned path of exact mh scores each read
  // as a local section; a = (flip 0.19) exists only while b is true, so proposing to b changes the number of
  // choices (2 with b true, 1 with b false) in a section's brush. P(b | y) is proportional to
  // 0.598 normal(-1.47; 0.79, 1.5) against 0.402 normal(-1.47; 0.39, 1.5): 0.508. The block-selection correction
  // of Eq. 3, counted before the sections were regenerated, missed that change (the odds of b doubled: 0.674).
  const std::string program = R"(
[assume b (flip 0.598)]
[assume a (if b (flip 0.19) false)]
[observe (normal (if b 0.79 0.39) 1.5) -1.47]
[infer (repeat 20000 (do (mh default one 1) (collect b)))]
)";
  const double t = 0.598 * std::exp(log_normal_pdf(-1.47, 0.79, 1.5));
  const double f = 0.402 * std::exp(log_normal_pdf(-1.47, 0.39, 1.5));
  ProgramRun run(program, 46);
  const std::vector<double> b = run.column("b", kBurnIn);
  check_probability(b, t / (t + f));
  expect_rejected(evaluate_probability(b, 2 * t / (2 * t + f)));
}

TEST_CASE("a transition undone for a deferred repair leaves no stale count that would undo every later one") {
  // c3's if takes c0's version when its branch is c0 (an output takes its family root's), and the children added
  // meanwhile were counted stale; undone, the transition left the count. Every later move of c0 to true then met
  // it, was undone for a repair that found nothing to do, and was drawn again: P(c0) 0.00002 against the exact
  // 0.871 (proportional to 0.835 (0.311 n(-0.82; -0.91, 1.5) + 0.689 n(-0.82; -0.95, 1.5)) against
  // 0.165 n(-0.82; -0.64, 2)).
  const std::string program = R"(
[assume f2 (lambda (x) (if x (flip 0.311) (not c3)))]
[assume c0 (flip 0.835)]
[assume c3 (if c0 c0 true)]
[observe (if c0 (normal (if (f2 true) -0.91 -0.95) 1.5) (normal (if c3 -0.64 0.78) 2)) -0.82]
[infer (repeat 20000 (do (mh default one 1) (collect c0)))]
)";
  const double t = 0.835 * (0.311 * std::exp(log_normal_pdf(-0.82, -0.91, 1.5)) +
                            0.689 * std::exp(log_normal_pdf(-0.82, -0.95, 1.5)));
  const double f = 0.165 * std::exp(log_normal_pdf(-0.82, -0.64, 2));
  ProgramRun run(program, 47);
  const std::vector<double> c0 = run.column("c0", kBurnIn);
  check_probability(c0, t / (t + f));
}

TEST_CASE("single-site mh over a coin read through a procedure body and an unrelated choice: no move discarded") {
  // Found by the posterior fuzzer (seed 22, reduced). The observation's predicate is c0 read through f0's body
  // (if c0 c0 c0), whose output copies c0's version; a choice a0's coin is drawn by (mh default one) too. Children
  // counted stale under the copied version made moves of c0 undone and redrawn, often as moves of the other coin:
  // P(c0) 0.945 against the exact 0.9378, which the enumeration below gives (a0's coin sums out of its observation).
  const std::string program = R"(
[assume f0 (lambda (x) (if x (flip 0.224) (if c0 c0 c0)))]
[assume c0 (flip 0.85)]
[assume c1 c0]
[assume a0 (normal (if (flip 0.501) 0.03 -0.18) 2)]
[observe (if (f0 (not true)) (normal (if (if (not c1) true c1) -0.87 0.43) 1) (normal 0.26 2)) -0.37]
[observe (normal (if c1 0.26 -0.11) 1) 1.05]
[observe (flip (if (if c0 c1 true) 0.551 0.64)) true]
[observe a0 0.13]
[infer (repeat 150000 (do (mh default one 1) (collect c0)))]
)";
  // c0 true: normal(-0.37; -0.87, 1) normal(1.05; 0.26, 1); false: normal(-0.37; 0.26, 2) normal(1.05; -0.11, 1).
  // The flip is observed under 0.551 either way ((if c0 c1 true) is true), and a0's observation weighs both alike.
  const double t = 0.85 * std::exp(log_normal_pdf(-0.37, -0.87, 1) + log_normal_pdf(1.05, 0.26, 1));
  const double f = 0.15 * std::exp(log_normal_pdf(-0.37, 0.26, 2) + log_normal_pdf(1.05, -0.11, 1));
  ProgramRun run(program, 48);
  const std::vector<double> c0 = run.column("c0", 5000);
  check_probability(c0, t / (t + f));
}

}  // namespace
}  // namespace vnt::test::branch_tests
