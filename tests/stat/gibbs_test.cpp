// Enumerative Gibbs against exact posteriors: small discrete models enumerated by hand, a block whose choice brings
// brush and changes the number of blocks (the index correction), a collapsed coin (a Polya urn), the count
// distributions gibbs can list (binomial, beta_binomial, uniform_discrete).
// SPDX-License-Identifier: Apache-2.0
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "tests/support/run_program.hpp"
#include "tests/support/stat_extra.hpp"

// Tolerances: a probability within 4 sqrt(p (1 - p) / ESS), a mean within 4 sd / sqrt(ESS). Each test also shows
// that its checks reject what a broken kernel would give.

namespace vnt::test::gibbs_tests {
namespace {

constexpr size_t kBurnIn = 500;

// a ~ flip(0.3), b ~ flip(0.6), c ~ categorical(0.2, 0.5, 0.3), y = a + 2b + c + normal(0, 0.6) observed at 4.
struct Exact {
  double pa = 0, pb = 0, mean_c = 0, sd_c = 0, p_ab = 0;
};

Exact enumerate_abc() {
  Exact e;
  double z = 0, c2 = 0;
  const std::array<double, 3> pc = {0.2, 0.5, 0.3};
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 3; ++c) {
        const double w = (a ? 0.3 : 0.7) * (b ? 0.6 : 0.4) * pc[static_cast<size_t>(c)] *
                         std::exp(log_normal_pdf(4.0, a + 2 * b + c, 0.6));
        z += w;
        e.pa += a * w;
        e.pb += b * w;
        e.p_ab += a * b * w;
        e.mean_c += c * w;
        c2 += c * c * w;
      }
  e.pa /= z, e.pb /= z, e.p_ab /= z, e.mean_c /= z;
  e.sd_c = std::sqrt(c2 / z - e.mean_c * e.mean_c);
  return e;
}

std::string abc_program(const std::string& infer) {
  return "[assume a (flip 0.3)]\n[assume b (flip 0.6)]\n[assume c (categorical (vector 0.2 0.5 0.3))]\n"
         "[observe (normal (+ (if a 1 0) (if b 2 0) c) 0.6) 4.0]\n[infer " + infer + "]\n";
}

void check_abc(ProgramRun& run) {
  const Exact e = enumerate_abc();
  MESSAGE("exact: P(a) " << e.pa << ", P(b) " << e.pb << ", P(a and b) " << e.p_ab << ", E[c] " << e.mean_c);
  const std::vector<double> a = run.column("a", kBurnIn), b = run.column("b", kBurnIn), c = run.column("c", kBurnIn);
  std::vector<double> ab(a.size());
  for (size_t i = 0; i < a.size(); ++i) ab[i] = a[i] * b[i];
  check_probability(a, e.pa);
  check_probability(b, e.pb);
  check_probability(ab, e.p_ab);
  check_mean(c, e.mean_c, e.sd_c);
  // The priors, which a kernel that did not weigh the observation would sample.
  expect_rejected(evaluate_probability(a, 0.3));
  expect_rejected(evaluate_probability(b, 0.6));
  expect_rejected(evaluate_mean(c, 1.1, e.sd_c));
}

}  // namespace

TEST_CASE("gibbs default one on two flips and a categorical matches exact enumeration") {
  ProgramRun run(abc_program("(repeat 10000 (do (gibbs default one 1) (collect a b c)))"), 71);
  check_abc(run);
}

TEST_CASE("gibbs default all, the 12 joint values scored at once, matches the same posterior") {
  ProgramRun run(abc_program("(repeat 4000 (do (gibbs default all 1) (collect a b c)))"), 72);
  check_abc(run);
  // A joint draw from the posterior at each transition: draws are independent, so the ESS is about their number.
  CHECK(effective_sample_size(run.column("c", kBurnIn)) > 2500);
}

TEST_CASE("gibbs on a choice that brings brush and changes the number of blocks of its scope") {
  // a decides whether b exists (scope 'd has 1 or 2 blocks: `one` needs the index correction) and which normal m
  // is drawn from (brush: the candidate for the other value of a draws m afresh from its prior). Marginalising m:
  // y ~ normal(mu_a + b, sqrt(s_a^2 + 0.25)) with (mu, s) = (1, 1) if a, else (-1, 0.5).
  ProgramRun run(R"(
[assume a (scope_include 'd 0 (flip 0.4))]
[assume b (if a (scope_include 'd 1 (flip 0.7)) false)]
[assume m (scope_include 'm 0 (if a (normal 1 1) (normal -1 0.5)))]
[observe (normal (+ m (if b 1 0)) 0.5) 1.2]
[infer (repeat 20000 (do (gibbs d one 1) (mh m one 'drift 0.7 2) (collect a b)))]
)",
                 73);
  const double w00 = 0.6 * std::exp(log_normal_pdf(1.2, -1, std::sqrt(0.5)));
  const double w10 = 0.4 * 0.3 * std::exp(log_normal_pdf(1.2, 1, std::sqrt(1.25)));
  const double w11 = 0.4 * 0.7 * std::exp(log_normal_pdf(1.2, 2, std::sqrt(1.25)));
  const double pa = (w10 + w11) / (w00 + w10 + w11), pb = w11 / (w00 + w10 + w11);
  const std::vector<double> a = run.column("a", kBurnIn), b = run.column("b", kBurnIn);
  check_probability(a, pa);
  check_probability(b, pb);
  // Without the index correction the same program gave P(a) = 0.989 (0.978 exact), 12 standard errors off.
  expect_rejected(evaluate_probability(a, 0.989));
  expect_rejected(evaluate_probability(a, 0.4));
}

TEST_CASE("gibbs on the draws of a collapsed coin: the Polya urn") {
  // make_beta_bernoulli(1, 1) with two true observations: the next draw is true with probability 3/4, and two
  // draws both true with 3/4 x 4/5 = 3/5. The coin's counts (its aux) follow every candidate.
  ProgramRun run(R"(
[assume coin (make_beta_bernoulli 1 1)]
[assume x (coin)]
[assume y (coin)]
[observe (coin) true]
[observe (coin) true]
[infer (repeat 10000 (do (gibbs default one 1) (collect x (and x y))))]
)",
                 74);
  check_probability(run.column("x", kBurnIn), 0.75);
  check_probability(run.column("(and x y)", kBurnIn), 0.6);
  expect_rejected(evaluate_probability(run.column("x", kBurnIn), 0.5));
  expect_rejected(evaluate_probability(run.column("(and x y)", kBurnIn), 1.0 / 3));  // the coin without the data
}

TEST_CASE("gibbs on binomial, beta_binomial and uniform_discrete choices matches exact enumeration") {
  // k ~ binomial(5, 0.4), j ~ beta_binomial(4, 2, 3), u ~ uniform_discrete(-2, 3), y = k + j - u + normal(0, 1)
  // observed at 6.5: the 6 x 5 x 5 joint values enumerated with pmfs written here from their definitions.
  const std::string program = R"(
[assume k (binomial 5 0.4)]
[assume j (beta_binomial 4 2 3)]
[assume u (uniform_discrete -2 3)]
[observe (normal (- (+ k j) u) 1) 6.5]
[infer (repeat 12000 (do (gibbs default one 1) (collect k j u (= u -2))))]
)";
  auto log_choose = [](double n, double x) {
    return std::lgamma(n + 1) - std::lgamma(x + 1) - std::lgamma(n - x + 1);
  };
  auto log_beta = [](double a, double b) { return std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b); };
  double z = 0, mk = 0, mj = 0, mu = 0, mk2 = 0, mj2 = 0, mu2 = 0, pu = 0;
  for (int k = 0; k <= 5; ++k)
    for (int j = 0; j <= 4; ++j)
      for (int u = -2; u < 3; ++u) {
        const double log_w = log_choose(5, k) + k * std::log(0.4) + (5 - k) * std::log(0.6) + log_choose(4, j) +
                             log_beta(j + 2, 4 - j + 3) - log_beta(2, 3) - std::log(5.0) +
                             log_normal_pdf(6.5, k + j - u, 1);
        const double w = std::exp(log_w);
        z += w, mk += k * w, mj += j * w, mu += u * w;
        mk2 += k * k * w, mj2 += j * j * w, mu2 += u * u * w;
        pu += (u == -2) * w;
      }
  mk /= z, mj /= z, mu /= z, pu /= z;
  const double sk = std::sqrt(mk2 / z - mk * mk), sj = std::sqrt(mj2 / z - mj * mj), su = std::sqrt(mu2 / z - mu * mu);
  MESSAGE("exact: E[k] " << mk << ", E[j] " << mj << ", E[u] " << mu << ", P(u = -2) " << pu);
  ProgramRun run(program, 75);
  const std::vector<double> k = run.column("k", kBurnIn), j = run.column("j", kBurnIn), u = run.column("u", kBurnIn);
  check_mean(k, mk, sk);
  check_mean(j, mj, sj);
  check_mean(u, mu, su);
  check_probability(run.column("(= u -2)", kBurnIn), pu);
  // The priors' means (2, 1.6, 0), which a kernel that did not weigh the observation would sample.
  expect_rejected(evaluate_mean(k, 2.0, sk));
  expect_rejected(evaluate_mean(j, 1.6, sj));
  expect_rejected(evaluate_mean(u, 0.0, su));
}

}  // namespace vnt::test::gibbs_tests
