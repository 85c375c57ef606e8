// Particle Gibbs against exact posteriors: a linear-Gaussian state-space model against the Kalman (RTS) smoother, over
// the whole line and by windows; a two-state hidden Markov model enumerated exactly; one group (conditional importance
// sampling) on a conjugate normal; states with a discrete parameter moved by gibbs, against Kalman likelihoods.
// SPDX-License-Identifier: Apache-2.0
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "tests/support/run_program.hpp"
#include "tests/support/stat_extra.hpp"

// Tolerances: a probability within 4 sqrt(p (1 - p) / ESS), a mean within 4 sd / sqrt(ESS), an sd by check_sd. Each
// test also shows that its checks reject what a kernel that got the conditioning wrong would give.

namespace vnt::test::pgibbs_tests {
namespace {

constexpr size_t kBurnIn = 200;

// x_0 ~ N(0, 1), x_t ~ N(a x_{t-1}, 0.5), y_t ~ N(x_t, 0.7).
constexpr std::array<double, 8> kY = {0.5, 1.2, 0.9, -0.3, 0.4, 1.6, 2.1, 1.4};
constexpr double kQ = 0.5, kR = 0.7;

struct Smoothed {
  std::vector<double> mean, sd, filtered_mean;
  double log_likelihood = 0;
};

/// The Kalman filter and the Rauch-Tung-Striebel smoother of the model with coefficient a.
Smoothed kalman(double a) {
  const size_t n = kY.size();
  std::vector<double> mf(n), pf(n), mp(n), pp(n);
  Smoothed out;
  double m = 0, p = 1;
  for (size_t t = 0; t < n; ++t) {
    if (t > 0) m = a * m, p = a * a * p + kQ * kQ;
    mp[t] = m, pp[t] = p;
    out.log_likelihood += log_normal_pdf(kY[t], m, std::sqrt(p + kR * kR));
    const double k = p / (p + kR * kR);
    m += k * (kY[t] - m), p *= 1 - k;
    mf[t] = m, pf[t] = p;
  }
  std::vector<double> ms = mf, ps = pf;
  for (size_t t = n - 1; t-- > 0;) {
    const double j = pf[t] * a / pp[t + 1];
    ms[t] = mf[t] + j * (ms[t + 1] - mp[t + 1]);
    ps[t] = pf[t] + j * j * (ps[t + 1] - pp[t + 1]);
  }
  out.mean = ms;
  out.filtered_mean = mf;
  for (double v : ps) out.sd.push_back(std::sqrt(v));
  return out;
}

std::string ssm_program(const std::string& a, const std::string& infer) {
  std::string p = "[assume a " + a + "]\n" +
                  "[assume x (mem (lambda (t) (scope_include 'x t (if (= t 0) (normal 0 1) "
                  "(normal (* a (x (- t 1))) 0.5)))))]\n";
  for (size_t t = 0; t < kY.size(); ++t) p += fmt::format("[observe (normal (x {}) 0.7) {}]\n", t, kY[t]);
  return p + "[assume x0 (x 0)]\n[assume x3 (x 3)]\n[assume x7 (x 7)]\n[infer " + infer + "]\n";
}

void check_states(ProgramRun& run, const Smoothed& k) {
  const std::array<size_t, 3> at = {0, 3, 7};
  for (size_t t : at) {
    const std::vector<double> x = run.column(fmt::format("x{}", t), kBurnIn);
    MESSAGE("x" << t << ": smoothed " << k.mean[t] << " +- " << k.sd[t]);
    check_mean(x, k.mean[t], k.sd[t]);
    check_sd(x, k.sd[t]);
  }
  // x_0 filtered (given y_0 alone), what a kernel that did not weigh the later observations would give.
  expect_rejected(evaluate_mean(run.column("x0", kBurnIn), k.filtered_mean[0], k.sd[0]));
  expect_rejected(evaluate_mean(run.column("x3", kBurnIn), 0.0, k.sd[3]));
}

}  // namespace

TEST_CASE("pgibbs over the ordered states of a linear-Gaussian model matches the Kalman smoother") {
  ProgramRun run(ssm_program("0.8", "(repeat 3000 (do (pgibbs x ordered 10 1) (collect x0 x3 x7)))"), 81);
  check_states(run, kalman(0.8));
}

TEST_CASE("pgibbs by windows of ordered_range conditions each window on the states after it") {
  // The first window's last state is scored against x_4, which the window holds fixed: leaving that density out
  // would sample x_3 as if the chain ended there.
  ProgramRun run(ssm_program("0.8", "(repeat 3000 (do (pgibbs x (ordered_range 0 3) 6 1) "
                                    "(pgibbs x (ordered_range 4 7) 6 1) (collect x0 x3 x7)))"),
                 82);
  check_states(run, kalman(0.8));
}

TEST_CASE("pgibbs with one particle beside the retained one still leaves the posterior invariant") {
  // Windows of two states: over the whole line two particles would rarely renew x_0 (the retained path's early
  // states survive resampling; without ancestor sampling, few particles mix slowly there).
  ProgramRun run(ssm_program("0.8", "(repeat 4000 (do (pgibbs x (ordered_range 0 1) 1 1) (pgibbs x (ordered_range 2 3) 1 1) "
                                    "(pgibbs x (ordered_range 4 5) 1 1) (pgibbs x (ordered_range 6 7) 1 1) "
                                    "(collect x0 x3 x7)))"),
                 83);
  check_states(run, kalman(0.8));
}

TEST_CASE("gibbs on a discrete coefficient cycled with pgibbs on the states matches the Kalman likelihoods") {
  // a is 0.95 or 0.2 with prior 1/2 each: P(a = 0.95 | y) from the two marginal likelihoods.
  const Smoothed hi = kalman(0.95), lo = kalman(0.2);
  const double p_hi = 1 / (1 + std::exp(lo.log_likelihood - hi.log_likelihood));
  MESSAGE("P(a = 0.95 | y) = " << p_hi);
  ProgramRun run(ssm_program("(if (scope_include 'a 0 (flip 0.5)) 0.95 0.2)",
                             "(repeat 4000 (do (gibbs a one 1) (pgibbs x ordered 10 1) (collect (= a 0.95) x7)))"),
                 84);
  const std::vector<double> is_hi = run.column("(= a 0.95)", kBurnIn);
  check_probability(is_hi, p_hi);
  expect_rejected(evaluate_probability(is_hi, 0.5));
  // x_7 is a mixture of the two smoothers.
  const double mean = p_hi * hi.mean[7] + (1 - p_hi) * lo.mean[7];
  const double second = p_hi * (hi.sd[7] * hi.sd[7] + hi.mean[7] * hi.mean[7]) +
                        (1 - p_hi) * (lo.sd[7] * lo.sd[7] + lo.mean[7] * lo.mean[7]);
  check_mean(run.column("x7", kBurnIn), mean, std::sqrt(second - mean * mean));
}

// s_0 ~ flip(0.5); P(s_t | s_{t-1}) = 0.9 or 0.2; y_t ~ N(s_t ? 1 : -1, 1.2).
constexpr std::array<double, 8> kHmmY = {0.8, 0.6, -0.9, -1.6, 1.1, 0.3, -0.2, 1.9};

TEST_CASE("pgibbs over the states of a hidden Markov model matches exact enumeration") {
  std::array<double, 8> p{};
  double p34 = 0, z = 0;
  for (unsigned s = 0; s < 256; ++s) {
    double w = 0.5;
    for (unsigned t = 0; t < 8; ++t) {
      const bool st = (s >> t) & 1u;
      if (t > 0) {
        const double up = ((s >> (t - 1)) & 1u) ? 0.9 : 0.2;
        w *= st ? up : 1 - up;
      }
      w *= std::exp(log_normal_pdf(kHmmY[t], st ? 1 : -1, 1.2));
    }
    z += w;
    for (unsigned t = 0; t < 8; ++t) p[t] += ((s >> t) & 1u) ? w : 0;
    p34 += (((s >> 3) & 1u) && ((s >> 4) & 1u)) ? w : 0;
  }
  for (double& v : p) v /= z;
  p34 /= z;
  std::string program =
      "[assume s (mem (lambda (t) (scope_include 's t (if (= t 0) (flip 0.5) (flip (if (s (- t 1)) 0.9 0.2))))))]\n";
  for (size_t t = 0; t < kHmmY.size(); ++t) program += fmt::format("[observe (normal (if (s {}) 1 -1) 1.2) {}]\n", t, kHmmY[t]);
  program += "[infer (repeat 3000 (do (pgibbs s ordered 5 1) (collect (s 0) (s 3) (s 7) (and (s 3) (s 4)))))]\n";
  ProgramRun run(program, 85);
  MESSAGE("exact: P(s_0) " << p[0] << ", P(s_3) " << p[3] << ", P(s_7) " << p[7] << ", P(s_3, s_4) " << p34);
  check_probability(run.column("(s 0)", kBurnIn), p[0]);
  check_probability(run.column("(s 3)", kBurnIn), p[3]);
  check_probability(run.column("(s 7)", kBurnIn), p[7]);
  check_probability(run.column("(and (s 3) (s 4))", kBurnIn), p34);
  expect_rejected(evaluate_probability(run.column("(s 3)", kBurnIn), 0.5));
}

TEST_CASE("pgibbs with a single group (default all) is conditional importance sampling of the posterior") {
  // mu ~ N(0, 1), y ~ N(mu, 0.5) observed at 1: mu | y ~ N(0.8, sqrt(0.2)).
  ProgramRun run("[assume mu (normal 0 1)]\n[observe (normal mu 0.5) 1.0]\n"
                 "[infer (repeat 4000 (do (pgibbs default all 8 1) (collect mu)))]\n",
                 86);
  const std::vector<double> mu = run.column("mu", kBurnIn);
  check_mean(mu, 0.8, std::sqrt(0.2));
  check_sd(mu, std::sqrt(0.2));
  expect_rejected(evaluate_mean(mu, 0.0, std::sqrt(0.2)));
}

}  // namespace vnt::test::pgibbs_tests
