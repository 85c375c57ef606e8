// The decision error of the sequential test against the exact MH decision (austerity paper, section 5.1
// and Fig. 1), on a fixed Gaussian population reshuffled with a fixed-seed pcg64.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <utility>
#include <vector>

#include "runtime/core/rng.hpp"
#include "runtime/infer/austerity/sequential_test.hpp"

namespace vnt {
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
  }
  s.error /= kReps;
  s.n_used /= kReps;
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

}  // namespace
}  // namespace vnt
