// ErrorSpending::kPerDecision: eps bounds the error of the whole sequence of tests of one decision, not of each
// test. Checked on the critical values, and by a decision-error study on a Gaussian population where the
// per-test rule, which looks up to N/Nbatch times, errs far more often than eps.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <numeric>
#include <vector>

#include "runtime/core/rng.hpp"
#include "runtime/infer/austerity/sequential_test.hpp"

namespace vnt::error_spending_tests {
namespace {

TEST_CASE("error spending: per-decision errors sum to at most eps and raise every critical value") {
  TQuantileCache per_test(0.05, 100, ErrorSpending::kPerTest);
  TQuantileCache per_decision(0.05, 100, ErrorSpending::kPerDecision);
  double sum = 0;
  for (size_t k = 1; k <= 100000; ++k) sum += per_decision.epsilon_at(k);
  CHECK(sum <= 0.05);
  CHECK(sum > 0.05 * 0.9999);  // 6/pi^2 * sum 1/k^2 -> 1
  CHECK(per_decision.epsilon_at(1) == doctest::Approx(0.05 * 6 / (std::numbers::pi * std::numbers::pi)).epsilon(1e-15));
  CHECK(per_decision.epsilon_at(3) == doctest::Approx(per_decision.epsilon_at(1) / 9).epsilon(1e-15));
  for (size_t k = 1; k <= 50; ++k) {
    CHECK(per_test.epsilon_at(k) == 0.05);
    CHECK(per_decision.critical(k) > per_test.critical(k));
    CHECK(per_decision.critical(k) ==
          doctest::Approx(TQuantileCache::compute(per_decision.epsilon_at(k), k * 100 - 1)).epsilon(1e-14));
  }
  // Rebinding with another spending drops the cached values.
  per_test.bind(0.05, 100, ErrorSpending::kPerDecision);
  CHECK(per_test.critical(2) == per_decision.critical(2));
}

// A population of N = 20000 values with mean mu0 + delta (delta > 0: exact MH accepts) and sd 1, Gaussian so
// that the t pivot of every test is Student-t: then P(wrong at test k) <= eps_k, and by the union bound a
// decision errs with probability <= sum eps_k = eps with per-decision spending.
double error_rate(ErrorSpending spending, double eps, int reps, Rng& rng) {
  constexpr size_t kN = 20000;
  constexpr double kMu0 = 0.1, kDelta = 0.004;
  std::vector<double> l(kN);
  for (double& x : l) x = rng.normal();
  const double mean = std::accumulate(l.begin(), l.end(), 0.0) / kN;
  double ss = 0;
  for (double x : l) ss += (x - mean) * (x - mean);
  for (double& x : l) x = kMu0 + kDelta + (x - mean) / std::sqrt(ss / kN);
  std::vector<size_t> order(kN);
  std::iota(order.begin(), order.end(), size_t{0});
  TQuantileCache cache;
  const SequentialTestConfig cfg{kMu0, kN, 100, eps, 1, spending};
  int wrong = 0;
  for (int rep = 0; rep < reps; ++rep) {
    size_t j = 0;
    SequentialTestResult r = sequential_test(cfg, cache, [&] {
      std::swap(order[j], order[j + rng.below(kN - j)]);
      return l[order[j++]];
    });
    wrong += r.accept ? 0 : 1;
  }
  return static_cast<double>(wrong) / reps;
}

TEST_CASE("error spending: per-decision keeps a decision's error within eps where per-test exceeds it") {
  constexpr int kReps = 1500;
  constexpr double kEps = 0.05;
  // Tolerance: 4 binomial standard errors at the bound.
  const double slack = 4 * std::sqrt(kEps * (1 - kEps) / kReps);
  Rng rng(314159);
  const double per_decision = error_rate(ErrorSpending::kPerDecision, kEps, kReps, rng);
  const double per_test = error_rate(ErrorSpending::kPerTest, kEps, kReps, rng);
  MESSAGE("decision error: per decision ", per_decision, ", per test ", per_test);
  CHECK(per_decision <= kEps + slack);
  // Negative control: the per-test rule's many looks push its error well past eps here.
  CHECK(per_test > kEps + slack);
}

}  // namespace
}  // namespace vnt::error_spending_tests
