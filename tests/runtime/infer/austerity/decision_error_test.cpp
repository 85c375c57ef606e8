// The decision error of the sequential test against the exact MH decision (austerity paper, section 5.1
// and Fig. 1), on a fixed Gaussian population reshuffled with a fixed-seed pcg64: within the union bound, and
// equal to what the paper's error analysis predicts (supplement, Proposition 2: a Gaussian random walk).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <numbers>
#include <numeric>
#include <utility>
#include <vector>

#include "runtime/core/rng.hpp"
#include "runtime/infer/austerity/sequential_test.hpp"

namespace vnt::decision_error_tests {
namespace {

constexpr size_t kN = 2000;      // population
constexpr size_t kBatch = 200;   // Nbatch: tests at n = 200, 400, ..., 1800 (n = 2000 is exact)
constexpr size_t kTests = 9;     // J, the number of approximate tests
constexpr int kReps = 2000;      // sequential tests per (delta, eps) setting
constexpr double kMu0 = 0.2;

// z_1..z_N standard normal, then standardised exactly (population mean 0, sd 1), so that the population
// l_i = mu0 + delta + z_i has mean mu0 + delta and sd 1, and mu_std = delta * sqrt(N - 1).
std::vector<double> standard_population(Rng& rng) {
  std::vector<double> z(kN);
  for (double& x : z) x = rng.normal();
  const double mean = std::accumulate(z.begin(), z.end(), 0.0) / kN;
  double ss = 0.0;
  for (double& x : z) ss += (x - mean) * (x - mean);
  const double sd = std::sqrt(ss / kN);
  for (double& x : z) x = (x - mean) / sd;
  return z;
}

struct Study {
  double error = 0.0;   // fraction of runs deciding unlike exact MH
  double n_used = 0.0;  // mean number of l_i drawn
  double n_sd = 0.0;    // sd of the number drawn, over the runs
};

Study run_study(const std::vector<double>& z, double delta, double eps, Rng& rng) {
  std::vector<double> l(kN);
  double sum = 0.0;
  for (size_t i = 0; i < kN; ++i) sum += l[i] = kMu0 + delta + z[i];
  const bool exact_accept = sum / kN >= kMu0;
  std::vector<size_t> order(kN);
  std::iota(order.begin(), order.end(), size_t{0});
  TQuantileCache cache;
  const SequentialTestConfig cfg{.mu0 = kMu0, .population = kN, .batch = kBatch, .epsilon = eps};
  Study s;
  for (int rep = 0; rep < kReps; ++rep) {
    // Lazy Fisher-Yates: draw j swaps a uniform pick of the rest into place. Any starting order gives a
    // uniform draw without replacement, so `order` needs no reset between runs.
    size_t j = 0;
    const SequentialTestResult r = sequential_test(cfg, cache, [&] {
      std::swap(order[j], order[j + rng.below(kN - j)]);
      return l[order[j++]];
    });
    if (r.accept != exact_accept) s.error += 1.0;
    s.n_used += static_cast<double>(r.n_used);
    s.n_sd += static_cast<double>(r.n_used) * static_cast<double>(r.n_used);
  }
  s.error /= kReps;
  s.n_used /= kReps;
  s.n_sd = std::sqrt(std::max(0.0, s.n_sd / kReps - s.n_used * s.n_used));
  return s;
}

/// The error and the expected data use of the test that the paper's analysis predicts (supplement, Prop. 2): the
/// statistics z_j after mini-batches j = 1..J follow a Gaussian random walk, z_j | z_{j-1} ~ N(m_j(z_{j-1}),
/// sigma_j^2) with pi_j = j m / N, and the test stops at the first |z_j| > c_j, the critical value of look j
/// (Student-t with j m - 1 df, as the test compares its t statistic with). Solved by propagating the density of
/// the undecided z over a grid; at n = N the decision is exact. For mu_std > 0 a wrong decision is z_j < -c_j.
Study predicted(double mu_std, double eps) {
  constexpr int kGrid = 1201;
  const double mu = std::abs(mu_std);
  std::vector<double> c(kTests + 1);
  double c_max = 0;
  for (size_t j = 1; j <= kTests; ++j) {
    c[j] = boost::math::quantile(boost::math::students_t(static_cast<double>(j * kBatch - 1)), 1.0 - eps);
    c_max = std::max(c_max, c[j]);
  }
  const double h = 2 * c_max / (kGrid - 1);
  auto z_at = [&](int k) { return -c_max + h * k; };
  const boost::math::normal unit;
  std::vector<double> density(kGrid, 0.0), next(kGrid);  // of z_j among the undecided runs
  Study s;
  double undecided = 1.0, n_mean = 0.0, n_sq = 0.0;
  for (size_t j = 1; j <= kTests; ++j) {
    const double pi = static_cast<double>(j * kBatch) / kN, pi0 = static_cast<double>((j - 1) * kBatch) / kN;
    const double drift = mu * (pi - pi0) / (1 - pi0) / std::sqrt(pi * (1 - pi));
    const double slope = j == 1 ? 0.0 : std::sqrt(pi0 / pi * (1 - pi) / (1 - pi0));
    const double sd = std::sqrt((pi - pi0) / (pi * (1 - pi0)));
    // Mass that stops at look j on each side, and the new density inside (-c_j, c_j).
    double wrong = 0, right = 0;
    std::fill(next.begin(), next.end(), 0.0);
    auto step = [&](double z0, double w) {  // w: probability mass at z0
      const double m = drift + slope * z0;
      wrong += w * boost::math::cdf(unit, (-c[j] - m) / sd);
      right += w * boost::math::cdf(boost::math::complement(unit, (c[j] - m) / sd));
      const double scale = w / (sd * std::sqrt(2 * std::numbers::pi));
      for (int k = 0; k < kGrid; ++k) {
        const double z = z_at(k), u = (z - m) / sd;
        if (std::abs(z) < c[j] && std::abs(u) < 12) next[k] += scale * std::exp(-0.5 * u * u);
      }
    };
    if (j == 1) {
      step(0.0, 1.0);
    } else {
      for (int k = 0; k < kGrid; ++k)
        if (density[k] > 0) step(z_at(k), density[k] * h * (k == 0 || k == kGrid - 1 ? 0.5 : 1.0));
    }
    s.error += wrong;
    const double n = static_cast<double>(j * kBatch), stopped = wrong + right;
    n_mean += n * stopped;
    n_sq += n * n * stopped;
    undecided -= stopped;
    density.swap(next);
  }
  n_mean += static_cast<double>(kN) * undecided;  // decided exactly with all the data
  n_sq += static_cast<double>(kN) * kN * undecided;
  s.n_used = n_mean;
  s.n_sd = std::sqrt(std::max(0.0, n_sq - n_mean * n_mean));
  return s;
}

TEST_CASE("sequential_test: decision error within the bound, falling with eps and |delta|") {
  Rng rng(20140621);
  const std::vector<double> z = standard_population(rng);
  const std::vector<double> deltas = {0.01, -0.02, 0.03, 0.06, -0.12};  // sorted by |delta|
  const std::vector<double> epsilons = {0.05, 0.01, 0.001};
  std::vector<std::vector<Study>> out(epsilons.size());
  for (size_t e = 0; e < epsilons.size(); ++e)
    for (double delta : deltas) out[e].push_back(run_study(z, delta, epsilons[e], rng));

  for (size_t e = 0; e < epsilons.size(); ++e) {
    const double eps = epsilons[e];
    // Bound. A wrong decision happens at some test j <= J. For the wrong side, say mu > mu0 but the test
    // rejects at j, t_j < -c_j must hold; since t_j >= (mean_j - mu)/s_j and that pivot is (under the CLT,
    // exact here up to the finite population) Student-t with n_j - 1 df, P(wrong at j) <= eps. A union
    // bound over the J tests gives P(wrong) <= J * eps for every delta (the worst case is mu -> mu0, where
    // each test stops with probability 2 eps and picks the wrong side half of the time). With R runs the
    // observed fraction has sd <= sqrt(p (1 - p) / R) at p = J eps; allow 3 sd above the bound.
    const double p = std::min(0.5, kTests * eps);
    const double tolerance = kTests * eps + 3.0 * std::sqrt(p * (1.0 - p) / kReps);
    for (size_t d = 0; d < deltas.size(); ++d) {
      const Study& s = out[e][d];
      MESSAGE("eps " << eps << "  delta " << deltas[d] << "  mu_std " << deltas[d] * std::sqrt(kN - 1.0)
                     << "  error " << s.error << "  mean n " << s.n_used << "  (bound " << tolerance << ")");
      CAPTURE(eps);
      CAPTURE(deltas[d]);
      CHECK(s.error <= tolerance);
      if (d > 0) CHECK(s.n_used < out[e][d - 1].n_used);  // more data when mu is nearer mu0
    }
    if (e > 0) {
      double now = 0.0, before = 0.0;
      for (size_t d = 0; d < deltas.size(); ++d) {
        now += out[e][d].error;
        before += out[e - 1][d].error;
        CHECK(out[e][d].error <= out[e - 1][d].error);
        CHECK(out[e][d].n_used > out[e - 1][d].n_used);
      }
      CHECK(now < before);
    }
  }
}

// The comparison of the paper's Fig. 1 (error: simulation against dynamic programming) and Fig. 10 (data use),
// tighter than the union bound above: the observed error and data use must be what the analysis predicts, within
// their Monte Carlo error (3 sd over kReps runs) and a small allowance for the analysis' approximations (batch
// means taken as Gaussian, the t statistic's own sd estimate taken as exact: 10 % of the error, 2 % of the data).
// A test whose critical values, finite-population correction or degrees of freedom were off by a little would pass
// the bound but not this.
TEST_CASE("sequential_test: decision error and data use as the paper's random-walk analysis predicts") {
  Rng rng(20140621);
  const std::vector<double> z = standard_population(rng);
  for (double eps : {0.05, 0.01}) {
    for (double delta : {0.01, -0.02, 0.03, 0.06}) {
      const double mu_std = delta * std::sqrt(kN - 1.0);  // sigma_l = 1
      const Study seen = run_study(z, delta, eps, rng);
      const Study want = predicted(mu_std, eps);
      MESSAGE("eps " << eps << "  mu_std " << mu_std << "  error " << seen.error << " (predicted " << want.error
                     << ")  mean n " << seen.n_used << " (predicted " << want.n_used << ")");
      CAPTURE(eps);
      CAPTURE(delta);
      const double error_sd = std::sqrt(want.error * (1 - want.error) / kReps);
      CHECK(std::abs(seen.error - want.error) <= 3 * error_sd + 0.1 * want.error + 1.0 / kReps);
      CHECK(std::abs(seen.n_used - want.n_used) <= 3 * want.n_sd / std::sqrt(kReps) + 0.02 * want.n_used);
    }
  }
}

}  // namespace
}  // namespace vnt::decision_error_tests
