// Discrete choices checked against exact enumeration: one categorical component label, then a small Gaussian
// mixture whose labels (3^3 configurations) are enumerated with the shared offset integrated out analytically.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "tests/support/run_program.hpp"
#include "tests/support/stat_extra.hpp"

// Tolerances: each P(z = k) within 4 sqrt(p (1 - p) / ESS) of the enumerated probability (ESS of the
// indicator chain), E[mu] within 4 sd / sqrt(ESS), sd(mu) within 4 of its standard error.

namespace vnt::test::mixture_tests {
namespace {

constexpr size_t kBurnIn = 500;

TEST_CASE("categorical component label: resimulation MH matches exact enumeration") {
  // z ~ categorical(0.2, 0.5, 0.3) picks a mean from (-2, 0, 2); two observations -0.3 and 0.4 with sd 2.
  // P(z = k | y) is proportional to pi_k normal(-0.3; c_k, 2) normal(0.4; c_k, 2): about 0.10, 0.73, 0.17.
  const std::string program = R"(
[assume z (categorical (vector 0.2 0.5 0.3))]
[assume m (lookup (vector -2 0 2) z)]
[observe (normal m 2) -0.3]
[observe (normal m 2) 0.4]
[infer (repeat 20000 (do (mh default one 1) (collect z)))]
)";
  const std::array<double, 3> prior = {0.2, 0.5, 0.3}, centre = {-2, 0, 2};
  std::array<double, 3> post{};
  double total = 0;
  for (size_t k = 0; k < 3; ++k) {
    post[k] = prior[k] * std::exp(log_normal_pdf(-0.3, centre[k], 2) + log_normal_pdf(0.4, centre[k], 2));
    total += post[k];
  }
  for (double& p : post) p /= total;
  MESSAGE("exact P(z = k | y): " << post[0] << ", " << post[1] << ", " << post[2]);
  ProgramRun run(program, 71);
  const std::vector<double> z = run.column("z", kBurnIn);
  for (size_t k = 0; k < 3; ++k) check_probability(indicator(z, static_cast<double>(k)), post[k]);
  CHECK(std::all_of(z.begin(), z.end(), [](double v) { return v == 0 || v == 1 || v == 2; }));
  // What would fail: the prior (0.2, 0.5, 0.3), and the posterior with only the first observation.
  expect_rejected(evaluate_probability(indicator(z, 1), prior[1]));
  double only_first[3], only_total = 0;
  for (size_t k = 0; k < 3; ++k) only_total += only_first[k] = prior[k] * std::exp(log_normal_pdf(-0.3, centre[k], 2));
  expect_rejected(evaluate_probability(indicator(z, 2), only_first[2] / only_total));
}

TEST_CASE("latent poisson count: resimulation MH matches exact enumeration") {
  // k ~ poisson(3), observed through normal(k, 1) = 5.2. P(k | y) is proportional to
  // poisson(k; 3) normal(5.2; k, 1), enumerated over k = 0..59 (the tail beyond is below 1e-30).
  const std::string program = R"(
[assume k (poisson 3)]
[observe (normal k 1) 5.2]
[infer (repeat 20000 (do (mh default one 2) (collect k)))]
)";
  std::vector<double> post(60);
  double total = 0, m1 = 0, m2 = 0;
  for (size_t k = 0; k < post.size(); ++k) {
    const double kd = static_cast<double>(k);
    post[k] = std::exp(kd * std::log(3.0) - 3 - std::lgamma(kd + 1) + log_normal_pdf(5.2, kd, 1));
    total += post[k];
  }
  for (size_t k = 0; k < post.size(); ++k) {
    post[k] /= total;
    m1 += post[k] * static_cast<double>(k);
    m2 += post[k] * static_cast<double>(k * k);
  }
  const double sd = std::sqrt(m2 - m1 * m1);
  MESSAGE("exact: E[k | y] = " << m1 << ", sd " << sd << ", P(k = 4) = " << post[4] << ", P(k = 5) = " << post[5]);
  ProgramRun run(program, 73);
  const std::vector<double> k = run.column("k", kBurnIn);
  check_mean(k, m1, sd);
  check_sd(k, sd);
  for (size_t v = 2; v <= 7; ++v) check_probability(indicator(k, static_cast<double>(v)), post[v]);
  // What would fail: the prior mean 3, and the likelihood alone (k near 5.2: mean 5.2).
  expect_rejected(evaluate_mean(k, 3.0, sd));
  expect_rejected(evaluate_mean(k, 5.2, sd));
}

// The mixture of the next test: mu ~ normal(0, kMuSd); each y_i ~ normal(mu + c[z_i], kNoise) with
// z_i ~ categorical(kPi) through a memoized procedure.
constexpr std::array<double, 3> kPi = {0.3, 0.4, 0.3}, kCentre = {-3, 0, 3};
constexpr std::array<double, 3> kY = {-1.4, 0.4, 2.0};
constexpr double kMuSd = 0.5, kNoise = 1.0;

struct MixturePosterior {
  std::array<std::array<double, 3>, 3> p_label{};  // P(z_i = k | y), [i][k]
  double p_z0_eq_z1 = 0;
  double mu_mean = 0, mu_sd = 0;
};

// Enumerates the 27 label configurations. Given the labels, r_i = y_i - c[z_i] are normal(mu, kNoise)
// observations of mu, so mu | z, y is normal with precision 1 / kMuSd^2 + 3 / kNoise^2, and the evidence is
// p(r) = p(r | mu) p(mu) / p(mu | r) at any mu (Bayes' rule), taken at the posterior mean.
MixturePosterior enumerate_mixture() {
  MixturePosterior out;
  double total = 0, m1 = 0, m2 = 0;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 3; ++c) {
        const std::array<int, 3> z = {a, b, c};
        const double precision = 1 / (kMuSd * kMuSd) + 3 / (kNoise * kNoise);
        double sum_r = 0;
        for (size_t i = 0; i < 3; ++i) sum_r += kY[i] - kCentre[z[i]];
        const double mean = sum_r / (kNoise * kNoise) / precision, sd = 1 / std::sqrt(precision);
        double log_w = log_normal_pdf(mean, 0, kMuSd) - log_normal_pdf(mean, mean, sd);
        for (size_t i = 0; i < 3; ++i)
          log_w += std::log(kPi[z[i]]) + log_normal_pdf(kY[i] - kCentre[z[i]], mean, kNoise);
        const double w = std::exp(log_w);
        total += w;
        for (size_t i = 0; i < 3; ++i) out.p_label[i][z[i]] += w;
        if (a == b) out.p_z0_eq_z1 += w;
        m1 += w * mean;
        m2 += w * (sd * sd + mean * mean);
      }
  for (auto& row : out.p_label)
    for (double& p : row) p /= total;
  out.p_z0_eq_z1 /= total;
  out.mu_mean = m1 / total;
  out.mu_sd = std::sqrt(m2 / total - out.mu_mean * out.mu_mean);
  return out;
}

TEST_CASE("Gaussian mixture with categorical labels: single-site MH matches exact enumeration") {
  // The components sit 3 apart and the offset's prior sd is 0.5, so the relabelled modes (mu shifted by 3)
  // have negligible mass and single-site moves mix; the enumeration includes them anyway.
  const std::string program = R"(
[assume mu (normal 0 0.5)]
[assume z (mem (lambda (i) (categorical (vector 0.3 0.4 0.3))))]
[assume y (lambda (i) (normal (+ mu (lookup (vector -3 0 3) (z i))) 1))]
[observe (y 0) -1.4]
[observe (y 1) 0.4]
[observe (y 2) 2.0]
[infer (repeat 40000 (do (mh default one 3) (collect mu (z 0) (z 1) (z 2) (= (z 0) (z 1)))))]
)";
  const MixturePosterior post = enumerate_mixture();
  MESSAGE("exact: P(z_0 = k) " << post.p_label[0][0] << " " << post.p_label[0][1] << " " << post.p_label[0][2]
                               << "; P(z_2 = k) " << post.p_label[2][0] << " " << post.p_label[2][1] << " "
                               << post.p_label[2][2] << "; P(z_0 = z_1) " << post.p_z0_eq_z1 << "; mu "
                               << post.mu_mean << " +- " << post.mu_sd);
  ProgramRun run(program, 72);
  const std::array<std::vector<double>, 3> z = {run.column("(z 0)", kBurnIn), run.column("(z 1)", kBurnIn),
                                                run.column("(z 2)", kBurnIn)};
  for (size_t i = 0; i < 3; ++i)
    for (size_t k = 0; k < 3; ++k) {
      // A label with posterior probability below 1e-3 has too few expected hits for the normal
      // approximation; it is still covered, as 1 minus the other two.
      if (post.p_label[i][k] < 1e-3) continue;
      check_probability(indicator(z[i], static_cast<double>(k)), post.p_label[i][k]);
    }
  check_probability(run.column("(= (z 0) (z 1))", kBurnIn), post.p_z0_eq_z1);
  const std::vector<double> mu = run.column("mu", kBurnIn);
  check_mean(mu, post.mu_mean, post.mu_sd);
  check_sd(mu, post.mu_sd);
  // What would fail: the labels at their prior (P(z_0 = 0) = 0.3), and mu as if the labels were fixed at
  // their most probable values (1, 1, 2), normal(-2 / 7, 1 / sqrt 7): the label uncertainty must widen it.
  expect_rejected(evaluate_probability(indicator(z[0], 0), kPi[0]));
  expect_rejected(evaluate_sd(mu, 1 / std::sqrt(7.0)));
  expect_rejected(evaluate_mean(mu, -2.0 / 7, post.mu_sd));
}

}  // namespace
}  // namespace vnt::test::mixture_tests
