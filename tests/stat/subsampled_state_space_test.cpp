// subsampled_mh on a parameter whose local sections depend on each other (the paper's section 4.3): phi of a
// linear-Gaussian state-space model, h_t ~ N(phi h_{t-1}, sig), x_t ~ N(h_t, r), with the latent h_t moved by
// exact single-site mh in the same cycle. Ground truth: the Kalman-filter likelihood integrated over phi.
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <cmath>
#include <numbers>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "runtime/core/mcmc_stats.hpp"
#include "runtime/core/rng.hpp"
#include "runtime/infer/austerity/sequential_test.hpp"
#include "tests/support/engine_fixture.hpp"
#include "tests/support/stat_extra.hpp"
#include "tests/support/stat_seed.hpp"

namespace vnt::test::subsampled_state_space_tests {
namespace {

constexpr size_t kT = 200;
constexpr double kSig = 0.3, kObsSd = 0.3, kPhiTrue = 0.9;

std::vector<double> simulate_series(uint64_t seed) {
  Rng rng(seed);
  std::vector<double> x(kT);
  double h = 0;
  for (double& xt : x) {
    h = kPhiTrue * h + kSig * rng.normal();
    xt = h + kObsSd * rng.normal();
  }
  return x;
}

// log p(x_1..T | phi) by the Kalman filter (h_0 = 0 is known).
double kalman_log_lik(double phi, std::span<const double> x) {
  double m = 0, p = 0, ll = 0;
  for (double xt : x) {
    const double mp = phi * m, pp = phi * phi * p + kSig * kSig, s = pp + kObsSd * kObsSd, v = xt - mp;
    ll -= 0.5 * (std::log(2 * std::numbers::pi * s) + v * v / s);
    const double k = pp / s;
    m = mp + k * v;
    p = (1 - k) * pp;
  }
  return ll;
}

// Posterior moments of phi: beta(5, 1) prior (density 5 phi^4) times the Kalman likelihood, by adaptive
// Gauss-Kronrod on (0, 1) (relative tolerance 1e-11).
Moments exact_phi(std::span<const double> x) {
  const double shift = kalman_log_lik(kPhiTrue, x);
  return moments_1d([&](double phi) { return 4 * std::log(phi) + kalman_log_lik(phi, x) - shift; }, 0, 1);
}

double log_normal(double x, double mean, double sd) {
  const double z = (x - mean) / sd;
  return -0.5 * z * z;  // constants cancel in every ratio below
}

struct CycleOptions {
  double drift = 0.05, eps = 0.05;
  size_t nbatch = 20, latent_moves = 5;
};

// A replica of the runtime's cycle in plain C++: one subsampled move on phi (Alg. 3: drift proposal, alpha_g from
// the beta(5, 1) prior, the l_t of sections drawn without replacement fed to the library's sequential test), then
// `latent_moves` moves of (mh default one): a block picked uniformly among the T + 1 random choices and proposed
// from its prior, so the ratio is that of its children (x_t and h_{t+1} for h_t; all h_t for phi).
std::vector<double> replica_cycle(std::span<const double> x, const CycleOptions& o, size_t cycles, uint64_t seed) {
  Rng rng(stat_seed(seed));
  std::vector<double> h(kT + 1, 0.0);  // h[0] = 0
  double phi = 0.9;
  std::vector<uint32_t> order(kT);
  std::iota(order.begin(), order.end(), 0u);
  TQuantileCache cache(o.eps, o.nbatch);
  auto l = [&](size_t t, double a, double b) {  // log N(h_t; a h_{t-1}, sig) - log N(h_t; b h_{t-1}, sig)
    return log_normal(h[t], a * h[t - 1], kSig) - log_normal(h[t], b * h[t - 1], kSig);
  };
  std::vector<double> out;
  out.reserve(cycles);
  for (size_t c = 0; c < cycles; ++c) {
    const double prop = phi + o.drift * rng.normal();
    const double log_u = std::log(rng.uniform());
    if (prop > 0 && prop < 1) {  // else the prior density is 0: rejected before any section is visited
      size_t drawn = 0;
      SequentialTestConfig cfg{(log_u - 4 * std::log(prop / phi)) / kT, kT, o.nbatch, o.eps, 1};
      const SequentialTestResult r = sequential_test(cfg, cache, [&] {
        const size_t j = drawn + rng.below(kT - drawn);
        std::swap(order[drawn], order[j]);
        return l(order[drawn++] + 1, prop, phi);
      });
      if (r.accept) phi = prop;
    }
    for (size_t m = 0; m < o.latent_moves; ++m) {
      const size_t t = rng.below(kT + 1);
      if (t == 0) {  // phi from its beta(5, 1) prior: U^(1/5)
        const double p2 = std::pow(rng.uniform(), 0.2);
        double a = 0;
        for (size_t s = 1; s <= kT; ++s) a += l(s, p2, phi);
        if (std::log(rng.uniform()) < a) phi = p2;
        continue;
      }
      const double h2 = phi * h[t - 1] + kSig * rng.normal();
      double a = log_normal(x[t - 1], h2, kObsSd) - log_normal(x[t - 1], h[t], kObsSd);
      if (t < kT) a += log_normal(h[t + 1], phi * h2, kSig) - log_normal(h[t + 1], phi * h[t], kSig);
      if (std::log(rng.uniform()) < a) h[t] = h2;
    }
    out.push_back(phi);
  }
  return out;
}

const std::string kModel = fmt::format(R"(
[assume phi (scope_include 'phi 0 (beta 5 1))]
[assume sig {}]
[assume h (mem (lambda (t) (if (<= t 0) 0 (normal (* phi (h (- t 1))) sig))))]
[assume x (lambda (t) (normal (h t) {}))]
)", kSig, kObsSd);

constexpr size_t kCycles = 30000, kLatentMoves = 20, kBurnIn = 2000;

/// The model with the series observed, then `cycles` runs of (cycle (phi_kernel (mh default one 20) collect)).
std::vector<double> runtime_phi(std::span<const double> x, const std::string& phi_kernel, uint64_t seed) {
  Engine e(stat_seed(seed));
  run(e, kModel);
  for (size_t t = 0; t < kT; ++t) e.observe_apply("x", {Value(static_cast<double>(t + 1))}, Value(x[t]));
  REQUIRE(e.trace().random_choices().size() == kT + 1);  // what the replica's (mh default one) picks from
  run(e, fmt::format("[infer (cycle ({} (mh default one {}) (collect phi)) {})]", phi_kernel, kLatentMoves, kCycles));
  const auto& names = e.draws().columns();
  REQUIRE(names.size() == 1);
  const std::vector<double>& all = e.draws().column(0);
  return {all.begin() + kBurnIn, all.end()};
}

// Tolerances (z = 4 throughout, as in stat_checks.hpp):
// - The exact cycle against the Kalman posterior: 4 sd / sqrt(ESS) (and 4 se of the sd).
// - The subsampled cycle against a plain C++ replica of the same cycle (same kernels, block choice, eps,
//   Nbatch and the library's sequential test, so the same stationary law): 4 sqrt(se_rt^2 + se_rep^2).
// - The subsampled cycle against the exact cycle (both runtime chains, different seeds): 4 sqrt(se_sub^2 +
//   se_mh^2) plus the bias that eps = 0.05 puts into the approximate chain. The paper's Theorem 1 gives no
//   number for it, so the replica, run 10 times longer, measures it against the Kalman posterior:
//   b = |m_rep - exact| + 4 se_rep. Here it is visible in the sd (about +8 %: eps = 0.05 with mini-batches of
//   20 is a loose setting) and below 0.02 sd in the mean.
// What fails (tried): the runtime model with observation sd 0.35 instead of 0.3 (mh against Kalman, and
// subsampled against replica), and the subsampled kernel with eps = 0.2 (against the replica and against mh).
// Sizes: observation sd 0.3 rather than the 0.5 suggested, and 20 latent moves per cycle rather than 5, so that
// single-site moves on h mix fast enough to give phi an ESS of about 3500 in 30000 cycles (6 s).
TEST_CASE("state-space phi: subsampled_mh cycled with exact latent moves matches exact mh and the Kalman posterior") {
  // T = 200 steps of h_t = 0.9 h_{t-1} + N(0, 0.3), x_t = h_t + N(0, 0.3): phi | x is about 0.928 +- 0.027.
  // Each l_t = log N(h_t; phi' h_{t-1}, sig) - log N(h_t; phi h_{t-1}, sig) reads h_{t-1}, which section t-1
  // absorbs: the local sections are dependent, which the sequential test allows (paper section 3.2).
  const std::vector<double> x = simulate_series(5);
  const Moments exact = exact_phi(x);
  const std::vector<double> sub = runtime_phi(x, "(subsampled_mh phi 0 20 0.05 'drift 0.05 1)", 41);
  const std::vector<double> mh = runtime_phi(x, "(mh phi 0 'drift 0.05 1)", 42);
  CycleOptions o;
  o.latent_moves = kLatentMoves;
  const std::vector<double> rep_all = replica_cycle(x, o, 10 * kCycles, 43);
  const std::vector<double> rep(rep_all.begin() + kBurnIn, rep_all.end());
  const Estimate s = estimate(sub), m = estimate(mh), p = estimate(rep);
  MESSAGE("phi: exact " << exact.mean << " +- " << exact.sd << "; subsampled " << s.mean << " +- " << s.sd
                        << " (ESS " << s.ess << "); mh " << m.mean << " +- " << m.sd << " (ESS " << m.ess
                        << "); replica " << p.mean << " +- " << p.sd << " (ESS " << p.ess << ")");
  check_agree("mean, mh vs Kalman", m.mean, m.se_mean, exact.mean, 0);
  check_agree("sd, mh vs Kalman", m.sd, m.se_sd, exact.sd, 0);
  check_agree("mean, subsampled vs replica", s.mean, s.se_mean, p.mean, p.se_mean);
  check_agree("sd, subsampled vs replica", s.sd, s.se_sd, p.sd, p.se_sd);
  const double b_mean = std::abs(p.mean - exact.mean) + 4 * p.se_mean, b_sd = std::abs(p.sd - exact.sd) + 4 * p.se_sd;
  CHECK(b_mean < 0.1 * exact.sd + 8 * p.se_mean);  // the allowances stay small, so the next checks mean something
  CHECK(b_sd < 0.2 * exact.sd + 8 * p.se_sd);
  check_agree("mean, subsampled vs mh", s.mean, s.se_mean, m.mean, m.se_mean, b_mean);
  check_agree("sd, subsampled vs mh", s.sd, s.se_sd, m.sd, m.se_sd, b_sd);
  // What would fail: the prior mean 5/6, and the posterior given only the first 50 observations.
  const Moments first = exact_phi(std::span(x).first(50));
  MESSAGE("posterior given the first 50 observations: " << first.mean << " +- " << first.sd);
  expect_rejected(evaluate_agree("subsampled mean vs the prior's", s.mean, s.se_mean, 5.0 / 6, 0, b_mean));
  expect_rejected(evaluate_agree("subsampled mean vs the first 50's", s.mean, s.se_mean, first.mean, 0, b_mean));
}

// The paper's section 4.3 pairs them so: particle Gibbs on the states, subsampled_mh on the parameter. With eps 0
// the pair is exact, and phi's draws must match the Kalman posterior of the first 60 observations (4 se of the ESS).
TEST_CASE("state-space phi: subsampled_mh (eps 0) cycled with pgibbs on the states matches the Kalman posterior") {
  constexpr size_t kSteps = 60, kPgibbsCycles = 2000, kPgibbsBurnIn = 200;
  const std::vector<double> series = simulate_series(5);
  const std::span<const double> x = std::span(series).first(kSteps);
  const Moments exact = exact_phi(x);
  Engine e(stat_seed(44));
  run(e, fmt::format(R"(
[assume phi (scope_include 'phi 0 (beta 5 1))]
[assume h (mem (lambda (t) (scope_include 'h t (if (<= t 0) 0 (normal (* phi (h (- t 1))) {})))))]
[assume x (lambda (t) (normal (h t) {}))]
)", kSig, kObsSd));
  for (size_t t = 0; t < kSteps; ++t) e.observe_apply("x", {Value(static_cast<double>(t + 1))}, Value(x[t]));
  run(e, fmt::format("[infer (repeat {} (do (subsampled_mh phi 0 10 0 'drift 0.05 2) (pgibbs h ordered 5 1) "
                     "(collect phi)))]",
                     kPgibbsCycles));
  const std::vector<double>& all = e.draws().column(0);
  const Estimate s = estimate(std::span(all).subspan(kPgibbsBurnIn));
  MESSAGE("phi: exact " << exact.mean << " +- " << exact.sd << "; subsampled + pgibbs " << s.mean << " +- " << s.sd
                        << " (ESS " << s.ess << ")");
  check_agree("mean, subsampled + pgibbs vs Kalman", s.mean, s.se_mean, exact.mean, 0);
  check_agree("sd, subsampled + pgibbs vs Kalman", s.sd, s.se_sd, exact.sd, 0);
  expect_rejected(evaluate_agree("mean vs the prior's", s.mean, s.se_mean, 5.0 / 6, 0));
}

}  // namespace
}  // namespace vnt::test::subsampled_state_space_tests
