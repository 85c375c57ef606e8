// mem: one random choice per argument, shared by every application; posteriors through memoized values,
// including an argument that is itself random (so memo entries appear and disappear under MH).
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "tests/support/run_program.hpp"
#include "tests/support/stat_extra.hpp"

// Tolerances: exact equality where mem must return the same value; otherwise means within 4 sd / sqrt(ESS),
// sds within 4 of their standard errors, P(z = 1) within 4 sqrt(p (1 - p) / ESS), correlations within
// 4 sd(u v) / sqrt(ESS(u v)) of the target (see tests/support/stat_extra.hpp).

namespace vnt::test::mem_tests {
namespace {

constexpr size_t kBurnIn = 500;

bool all_zero(const std::vector<double>& xs) {
  return !xs.empty() && std::all_of(xs.begin(), xs.end(), [](double x) { return x == 0.0; });
}

TEST_CASE("mem: the same argument gives the same value and different arguments are independent") {
  // (f 1) and (f 2) are random choices of the trace (through a and c); (f 3) exists only while a collect
  // evaluates it, so each row sees a fresh prior draw. Without observations every value has the normal(0, 1)
  // prior as posterior.
  const std::string program = R"(
[assume f (mem (lambda (i) (normal 0 1)))]
[assume a (f 1)]
[assume c (f 2)]
[infer (repeat 20000 (do (mh default one 2) (collect (- (f 1) (f 1)) (- (f 1) a) (f 1) (f 2) (f 3))))]
)";
  ProgramRun run(program, 51);
  // A broken mem (a fresh choice per application) makes these differences normal(0, sqrt 2), never 0.
  CHECK(all_zero(run.column("(- (f 1) (f 1))")));
  CHECK(all_zero(run.column("(- (f 1) a)")));
  const std::vector<double> f1 = run.column("(f 1)", kBurnIn), f2 = run.column("(f 2)", kBurnIn);
  const std::vector<double> f3 = run.column("(f 3)", kBurnIn);
  for (const auto* xs : {&f1, &f2, &f3}) {
    check_mean(*xs, 0, 1);
    check_sd(*xs, 1);
  }
  check_correlation(f1, f2, 0);
  check_correlation(f1, f3, 0);
  // What would fail: a mem keyed on the procedure only, so (f 2) is (f 1) (r = 1); this check resolves a
  // correlation of 0.1 already.
  expect_rejected(evaluate_correlation(f1, f2, 0.1));
}

TEST_CASE("mem: observations through memoized values give the conjugate posterior") {
  // (f 1) is observed twice through two separate applications, (f 2) once: (f 1) | y ~ normal(2.4 * 4 / 9,
  // 1 / 3) (precision 1 + 4 + 4), (f 2) | y ~ normal(-0.5 / 2, 1 / sqrt 2), and (f 3) keeps its prior.
  const std::string program = R"(
[assume f (mem (lambda (i) (normal 0 1)))]
[observe (normal (f 1) 0.5) 1.0]
[observe (normal (f 1) 0.5) 1.4]
[observe (normal (f 2) 1) -0.5]
[infer (repeat 20000 (do (mh default one 2) (collect (f 1) (f 2) (f 3))))]
)";
  ProgramRun run(program, 52);
  const std::vector<double> f1 = run.column("(f 1)", kBurnIn), f2 = run.column("(f 2)", kBurnIn);
  const std::vector<double> f3 = run.column("(f 3)", kBurnIn);
  check_mean(f1, 2.4 * 4 / 9, 1.0 / 3);
  check_sd(f1, 1.0 / 3);
  check_mean(f2, -0.25, std::sqrt(0.5));
  check_sd(f2, std::sqrt(0.5));
  check_mean(f3, 0, 1);
  check_sd(f3, 1);
  check_correlation(f1, f2, 0);
  // What would fail: (f 1) seeing only one of its two observations (the second application making a new
  // choice): normal(1.0 * 4 / 5, sqrt(1 / 5)) for the first; and (f 1) at its prior (mean 0).
  expect_rejected(evaluate_mean(f1, 0.8, 1.0 / 3));
  expect_rejected(evaluate_sd(f1, std::sqrt(0.2)));
  expect_rejected(evaluate_mean(f1, 0, 1.0 / 3));
}

double normal_pdf(double x, double mean, double sd) {
  const double z = (x - mean) / sd;
  return std::exp(-0.5 * z * z) / (sd * std::sqrt(2 * std::numbers::pi));
}

// Mean and sd of a two-component mixture.
struct Mix {
  double mean, sd;
};
Mix mixture(double w1, double mean1, double sd1, double mean0, double sd0) {
  const double m = w1 * mean1 + (1 - w1) * mean0;
  const double second = w1 * (sd1 * sd1 + mean1 * mean1) + (1 - w1) * (sd0 * sd0 + mean0 * mean0);
  return {m, std::sqrt(second - m * m)};
}

TEST_CASE("mem with a random argument: (f z) matches exact enumeration over z") {
  // f(0), f(1) ~ normal(0, 1) independently, z ~ bernoulli(0.5); f(0) is observed at -1.0 and f(z) at 0.5,
  // both with sd 0.5. Given z, everything is Gaussian:
  //   z = 1: f(0) | y ~ normal(-0.8, sqrt 0.2), f(1) | y ~ normal(0.4, sqrt 0.2), evidence of the second
  //          observation normal(0.5; 0, sqrt(1 + 0.25));
  //   z = 0: f(0) | y ~ normal((-1.0 + 0.5) 4 / 9, 1 / 3), f(1) keeps its prior, evidence
  //          normal(0.5; -0.8, sqrt(0.2 + 0.25)) (the first observation's evidence is common to both).
  // Flipping z removes the application (f 1) from the trace (its memo entry is dropped when unused) or
  // creates it, so this exercises mem entries appearing and disappearing inside MH proposals.
  const std::string program = R"(
[assume f (mem (lambda (i) (normal 0 1)))]
[assume z (bernoulli 0.5)]
[observe (normal (f 0) 0.5) -1.0]
[observe (normal (f z) 0.5) 0.5]
[infer (repeat 20000 (do (mh default one 2) (collect z (f 0) (f 1))))]
)";
  const double e1 = normal_pdf(0.5, 0, std::sqrt(1.25)), e0 = normal_pdf(0.5, -0.8, std::sqrt(0.45));
  const double p1 = e1 / (e1 + e0);
  const Mix f0 = mixture(p1, -0.8, std::sqrt(0.2), -2.0 / 9, 1.0 / 3);
  const Mix f1 = mixture(p1, 0.4, std::sqrt(0.2), 0, 1);
  MESSAGE("exact: P(z = 1 | y) = " << p1 << ", f(0): " << f0.mean << " +- " << f0.sd << ", f(1): " << f1.mean
                                   << " +- " << f1.sd);
  ProgramRun run(program, 53);
  const std::vector<double> z = run.column("z", kBurnIn), f0s = run.column("(f 0)", kBurnIn);
  const std::vector<double> f1s = run.column("(f 1)", kBurnIn);
  check_probability(z, p1);
  check_mean(f0s, f0.mean, f0.sd);
  check_sd(f0s, f0.sd);
  check_mean(f1s, f1.mean, f1.sd);
  check_sd(f1s, f1.sd);
  const std::vector<double> f0_given0 = where(f0s, z, 0.0), f1_given1 = where(f1s, z, 1.0);
  check_mean(f0_given0, -2.0 / 9, 1.0 / 3);
  check_mean(f1_given1, 0.4, std::sqrt(0.2));
  // What would fail: the prior P(z = 1) = 0.5; f(0) given z = 0 without the second observation (mean -0.8,
  // i.e. (f z) not routed to the memo entry of f(0)); f(1) given z = 1 at its prior mean 0.
  expect_rejected(evaluate_probability(z, 0.5));
  expect_rejected(evaluate_mean(f0_given0, -0.8, 1.0 / 3));
  expect_rejected(evaluate_mean(f1_given1, 0, std::sqrt(0.2)));
}

TEST_CASE("mem: a family asked for with a key that moves and with a fixed key keeps its prior") {
  // No observation: P(c0) is its prior 0.3 and (g 2) is flip(0.219) while c0 is false. (g 2) is requested by c2
  // and, while c0 and (g 2) are false, twice by c1 (its predicate and its else branch, both with a key computed
  // from c0). The scaffold once counted the else branch's request twice, took (g 2) for brush although c2 still
  // asked for it, and never regenerated c0: the chain stayed at c0 = false.
  const std::string program = R"(
[assume g (mem (lambda (k) (if c0 (flip 0.242) (flip 0.219))))]
[assume c0 (flip 0.3)]
[assume c1 (if (g (if c0 1 2)) c0 (g (if c0 1 2)))]
[assume c2 (g 2)]
[infer (repeat 20000 (do (mh default all 1) (collect c0 c2)))]
)";
  ProgramRun run(program, 54);
  const std::vector<double> c0 = run.column("c0", kBurnIn), c2 = run.column("c2", kBurnIn);
  check_probability(c0, 0.3);
  check_probability(c2, 0.3 * 0.242 + 0.7 * 0.219);
}

}  // namespace
}  // namespace vnt::test::mem_tests
