// Unit tests of the austerity sequential test: the conformance fixture, exactness at n = N, s_l = 0,
// infinities, the three entry points, and config validation.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/infer/austerity/sequential_test.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/core/rng.hpp"

namespace vnt::sequential_test_tests {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

SequentialTestResult run(const SequentialTestConfig& cfg, const std::vector<double>& l) {
  size_t i = 0;
  return sequential_test(cfg, [&] { return l.at(i++); });
}

// Runs f, expecting a vnt::Error; returns "<kind>: <message>" (or "no error").
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return std::string(error_kind_name(e.kind())) + ": " + e.message();
  }
  return "no error";
}

// The conformance fixture of docs subsampled-mh.md (from the original implementation's unit test).
const std::vector<std::vector<double>> kYs = {
    {-1.37, -2.37, 1.96, -0.27, -2.38, -0.41, -1.69, -0.63, 2.85, 2.98, -1.49, -0.75, 0.85, 0.23, -1.02, 2.04,
     -2.84, 5.09, -0.72, 0.80},
    {-1.41, -2.04, 2.27, 0.08, 0.46, 0.25, 1.39, 3.48, 1.33, 1.38, 2.48, 1.80, -2.30, -0.53, -3.25, 1.16, 3.80,
     3.16, 1.84, -1.88},
    {-1.47, 0.36, -0.26, 1.74, 2.63, -0.50, -0.14, 2.19, 0.98, -3.36, -1.62, -1.50, -2.65, -0.36, 0.26, 2.79,
     1.41, 2.33, -1.51, 0.64},
    {3.27, -1.30, 1.35, 2.55, -2.08, 0.98, -1.81, -0.95, -1.33, -1.00, -0.62, -1.67, -1.26, 1.00, 3.34, -3.08,
     -0.54, 0.68, 0.97, 1.91},
    {0.26, -3.48, 1.34, 1.80, -1.10, -0.64, -1.17, -0.33, -1.87, 2.38, -2.43, -0.76, 2.65, 0.77, -0.72, -0.85,
     0.77, 1.81, 1.44, 3.47},
    {-2.02, -0.36, -4.05, 0.82, 1.47, 0.16, -3.37, -4.12, 3.64, -2.50, 1.87, -0.34, -0.16, -1.22, 1.14, -0.31,
     -2.14, -0.63, -0.03, -0.26},
    {0.89, 0.80, -5.03, -1.58, -0.23, 0.95, 1.37, 1.08, -0.76, 2.89, -1.62, -2.94, 0.85, 1.93, 1.94, 1.04, 1.75,
     0.32, 3.13, 2.71},
    {0.19, 1.57, 2.22, 3.00, -0.26, 2.52, 2.19, 1.95, 2.40, -0.21, 1.24, 2.18, -0.88, -2.56, 1.32, 0.40, 0.90,
     -0.03, -1.69, 0.97},
    {1.87, 0.58, -0.43, -0.08, -0.46, -2.76, 0.53, 2.12, 0.12, -1.13, 1.33, 2.42, 0.91, 0.99, 0.44, -1.15, 0.26,
     2.26, -0.11, 1.41},
    {-0.12, 1.18, -1.24, -2.38, -4.87, 1.46, 0.69, 1.46, 1.14, -3.56, 0.21, 3.87, 1.86, -0.30, -0.94, -0.73, 0.52,
     0.37, -1.79, -0.91}};
const bool kAccept[] = {false, true, false, false, false, false, true, true, true, false};
const size_t kN[] = {6, 12, 14, 14, 12, 8, 20, 6, 18, 10};
const double kT[] = {-1.758886, 2.541570, -1.820940, -1.574872, -2.159024,
                     -2.587167, 0.018556, 2.912594, 2.283297,  -1.569315};

TEST_CASE("sequential_test: conformance fixture (mu0 0.2, k0 3, Nbatch 2, N 20, eps 0.1)") {
  const SequentialTestConfig cfg{.mu0 = 0.2, .population = 20, .batch = 2, .epsilon = 0.1, .min_batches = 3};
  for (size_t c = 0; c < kYs.size(); ++c) {
    CAPTURE(c);
    // The fixture came from an implementation that decided at once when s = 0; ours draws on instead.
    // No case reaches s = 0: the first two values of every case differ, so every prefix with n >= 2
    // (every test point, k >= 3) has positive variance, and both rules agree on all ten.
    REQUIRE(kYs[c][0] != kYs[c][1]);
    const SequentialTestResult r = run(cfg, kYs[c]);
    CHECK(r.accept == kAccept[c]);
    CHECK(r.n_used == kN[c]);
    CHECK(r.batches == kN[c] / 2);
    CHECK(std::abs(r.t - kT[c]) <= 1e-5);
    CHECK(r.exact == (kN[c] == 20));  // case 7 decides exactly and reports the t of n = 18
  }
}

TEST_CASE("sequential_test: eps = 0 is the exact MH decision, with n_used = N") {
  Rng rng(11);
  for (int rep = 0; rep < 500; ++rep) {
    const size_t big_n = 1 + rng.below(60);
    const size_t m = 1 + rng.below(7);
    std::vector<double> l(big_n);
    long double sum = 0;
    for (double& x : l) {
      x = 0.3 + 2.0 * rng.normal();
      sum += static_cast<long double>(x);
    }
    const double mean = static_cast<double>(sum / static_cast<long double>(big_n));
    const double mu0 = mean + 0.05 * rng.normal();
    const SequentialTestConfig cfg{
        .mu0 = mu0, .population = big_n, .batch = m, .epsilon = 0.0, .min_batches = 1 + rng.below(3)};
    const SequentialTestResult r = run(cfg, l);
    CAPTURE(rep);
    CHECK(r.accept == (mean >= mu0));
    CHECK(r.n_used == big_n);
    CHECK(r.batches == (big_n + m - 1) / m);
    CHECK(r.exact);
    CHECK(r.mean == doctest::Approx(mean).epsilon(1e-12));
  }
}

TEST_CASE("sequential_test: a last partial mini-batch is drawn and decided exactly") {
  const std::vector<double> l = {1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0};  // N = 7, Nbatch = 3: 3 + 3 + 1
  const SequentialTestResult r = run({.mu0 = 18.0, .population = 7, .batch = 3, .epsilon = 0.0}, l);
  CHECK(r.n_used == 7);
  CHECK(r.batches == 3);
  CHECK(r.exact);
  CHECK(r.accept);  // mean 127/7 = 18.14
  CHECK_FALSE(run({.mu0 = 18.2, .population = 7, .batch = 3, .epsilon = 0.0}, l).accept);
  CHECK(r.sd == doctest::Approx(22.937804104640));
}

TEST_CASE("sequential_test: all-equal values never decide early (s_l = 0)") {
  const std::vector<double> l(50, 0.1);  // 0.1 is not a binary fraction: m2 - mean^2 would not be 0
  const SequentialTestConfig accept_cfg{.mu0 = 0.0999, .population = 50, .batch = 5, .epsilon = 0.45};
  SequentialTestResult r = run(accept_cfg, l);
  CHECK(r.n_used == 50);
  CHECK(r.exact);
  CHECK(r.accept);
  CHECK(r.t == kInf);  // no t was ever computed
  CHECK(r.sd == 0.0);
  SequentialTestConfig reject_cfg = accept_cfg;
  reject_cfg.mu0 = 0.1001;
  r = run(reject_cfg, l);
  CHECK(r.n_used == 50);
  CHECK_FALSE(r.accept);
  CHECK(r.t == -kInf);
}

TEST_CASE("sequential_test: constant for the first batches, then varying") {
  std::vector<double> l(100, 0.3);
  for (size_t i = 20; i < 100; ++i) l[i] = (i % 2 == 0) ? 5.1 : 4.9;
  const SequentialTestResult r = run({.mu0 = 0.0, .population = 100, .batch = 5, .epsilon = 0.1}, l);
  // The original rule would accept at n = 5 (s = 0, t = +inf); here the first test is at n = 25.
  CHECK(r.n_used == 25);
  CHECK(r.accept);
  CHECK_FALSE(r.exact);
  CHECK(std::isfinite(r.t));
  CHECK(r.t > 1.32);  // T_24^-1(0.9) = 1.318
}

TEST_CASE("sequential_test: n = 1 is never tested (df would be 0)") {
  const std::vector<double> l = {3.0, -1.0, 2.0};
  const SequentialTestResult r = run({.mu0 = 0.0, .population = 3, .batch = 1, .epsilon = 0.49}, l);
  CHECK(r.n_used >= 2);
}

TEST_CASE("sequential_test: infinite mu0 decides without drawing") {
  int calls = 0;
  auto next = [&] {
    ++calls;
    return 0.0;
  };
  SequentialTestResult r = sequential_test({.mu0 = kInf, .population = 10, .batch = 2, .epsilon = 0.1}, next);
  CHECK_FALSE(r.accept);
  CHECK(r.n_used == 0);
  CHECK(r.batches == 0);
  CHECK(r.t == -kInf);
  CHECK(r.exact);
  r = sequential_test({.mu0 = -kInf, .population = 10, .batch = 2, .epsilon = 0.1}, next);
  CHECK(r.accept);
  CHECK(r.n_used == 0);
  CHECK(r.t == kInf);
  CHECK(calls == 0);
}

TEST_CASE("sequential_test: an infinite l_i decides at the end of its mini-batch, -inf over +inf") {
  // mu0 near the first mini-batch's mean: it cannot decide, the second one holds the infinity.
  const std::vector<double> l = {0.5, 0.7, 0.1, -kInf, 2.0, 3.0, 4.0, 5.0};
  for (double eps : {0.05, 0.0}) {
    CAPTURE(eps);
    SequentialTestResult r = run({.mu0 = 0.4, .population = 8, .batch = 3, .epsilon = eps}, l);
    CHECK_FALSE(r.accept);
    CHECK(r.n_used == 6);
    CHECK(r.exact);
    CHECK(r.mean == -kInf);
    // Probability zero under the current value (+inf) is left only for positive probability.
    std::vector<double> both = l;
    both[4] = kInf;
    r = run({.mu0 = 0.4, .population = 8, .batch = 3, .epsilon = eps}, both);
    CHECK_FALSE(r.accept);
    CHECK(r.n_used == 6);
  }
  std::vector<double> up = l;
  up[3] = kInf;
  SequentialTestResult r = run({.mu0 = 0.4, .population = 8, .batch = 3, .epsilon = 0.05}, up);
  CHECK(r.accept);
  CHECK(r.n_used == 6);
  CHECK(r.mean == kInf);
}

TEST_CASE("sequential_test: with eps = 0, +inf decides only once all N are seen") {
  std::vector<double> l = {0.5, 0.7, 0.1, kInf, 2.0, 3.0, 4.0, 5.0};
  SequentialTestResult r = run({.mu0 = 100.0, .population = 8, .batch = 3, .epsilon = 0.0}, l);
  CHECK(r.accept);
  CHECK(r.n_used == 8);
  CHECK(r.exact);
  CHECK(r.mean == kInf);
  l[7] = -kInf;  // a later -inf changes the exact decision
  r = run({.mu0 = 100.0, .population = 8, .batch = 3, .epsilon = 0.0}, l);
  CHECK_FALSE(r.accept);
  CHECK(r.n_used == 8);
  // mu0 = -inf (the current global section has density zero) waits for the sections too.
  r = run({.mu0 = -kInf, .population = 8, .batch = 3, .epsilon = 0.0}, l);
  CHECK_FALSE(r.accept);
  CHECK(r.n_used == 8);
  l[7] = 1.0;
  r = run({.mu0 = -kInf, .population = 8, .batch = 3, .epsilon = 0.0}, l);
  CHECK(r.accept);
  CHECK(r.n_used == 8);
}

TEST_CASE("sequential_test: NaN inputs are inference errors") {
  const std::vector<double> l = {0.5, std::nan(""), 0.1};
  CHECK(error_of([&] { run({.mu0 = 0.0, .population = 3, .batch = 2, .epsilon = 0.1}, l); }) ==
        "inference error: subsampled_mh: the log-weight l_i of a local section is NaN (value 2 of 3)");
  CHECK(error_of([&] { run({.mu0 = std::nan(""), .population = 3, .batch = 2, .epsilon = 0.1}, l); }) ==
        "inference error: subsampled_mh: the threshold mu0 = (log u - alpha_g) / N is NaN");
}

TEST_CASE("sequential_test: config validation messages") {
  auto check = [](SequentialTestConfig cfg) { return error_of([&] { cfg.validate(); }); };
  const SequentialTestConfig ok{.mu0 = 0.0, .population = 10, .batch = 2, .epsilon = 0.05, .min_batches = 3};
  CHECK(check(ok) == "no error");
  SequentialTestConfig c = ok;
  c.batch = 0;
  CHECK(check(c) == "inference error: subsampled_mh: Nbatch must be a positive integer, got 0");
  c = ok;
  c.epsilon = 1.5;
  CHECK(check(c) == "inference error: subsampled_mh: eps must be in [0, 1), got 1.5");
  c.epsilon = 1.0;
  CHECK(check(c) == "inference error: subsampled_mh: eps must be in [0, 1), got 1");
  c.epsilon = -0.01;
  CHECK(check(c) == "inference error: subsampled_mh: eps must be in [0, 1), got -0.01");
  c.epsilon = std::nan("");
  CHECK(check(c) == "inference error: subsampled_mh: eps must be in [0, 1), got nan");
  c = ok;
  c.min_batches = 0;
  CHECK(check(c) == "inference error: subsampled_mh: k0 must be a positive integer, got 0");
  c = ok;
  c.population = 0;
  CHECK(check(c) == "inference error: subsampled_mh: the number of local sections N must be positive, got 0");
  CHECK(error_of([] { SequentialTestConfig::validate_options(5, 0.0, 1); }) == "no error");
  // The test validates before drawing.
  CHECK(error_of([] {
          sequential_test({.mu0 = 0.0, .population = 4, .batch = 0, .epsilon = 0.1}, [] { return 0.0; });
        }) == "inference error: subsampled_mh: Nbatch must be a positive integer, got 0");
}

TEST_CASE("sequential_test: one-at-a-time, batched and stepwise forms agree, a cache is reusable") {
  Rng rng(5);
  TQuantileCache shared;
  for (int rep = 0; rep < 300; ++rep) {
    const size_t big_n = 2 + rng.below(300);
    std::vector<double> l(big_n);
    for (double& x : l) x = 0.01 * rng.normal() + 0.02 * rng.uniform();
    const SequentialTestConfig cfg{.mu0 = 0.01 + 0.002 * rng.normal(),
                                   .population = big_n,
                                   .batch = 1 + rng.below(400),  // also above the 256-value stack buffer
                                   .epsilon = 0.3 * rng.uniform(),
                                   .min_batches = 1 + rng.below(3)};
    const SequentialTestResult a = run(cfg, l);
    size_t i = 0;
    const SequentialTestResult b = sequential_test_batched(cfg, shared, [&](size_t k, double* out) {
      for (size_t j = 0; j < k; ++j) out[j] = l[i++];
    });
    SequentialTest step(cfg, shared);
    size_t at = 0;
    while (!step.done()) {
      for (size_t j = step.next_batch_size(); j > 0; --j) step.add(l[at++]);
      step.end_batch();
    }
    const SequentialTestResult& c = step.result();
    CAPTURE(rep);
    for (const SequentialTestResult* r : {&b, &c}) {
      CHECK(r->accept == a.accept);
      CHECK(r->n_used == a.n_used);
      CHECK(r->batches == a.batches);
      CHECK(r->t == a.t);
      CHECK(r->mean == a.mean);
      CHECK(r->sd == a.sd);
      CHECK(r->exact == a.exact);
    }
    CHECK(i == a.n_used);
  }
}

TEST_CASE("SequentialTest: a mini-batch of the wrong size is an internal error") {
  TQuantileCache cache;
  SequentialTest step({.mu0 = 0.0, .population = 10, .batch = 4, .epsilon = 0.1}, cache);
  step.add(1.0);
  const std::string e = error_of([&] { step.end_batch(); });
  CHECK(e.rfind("internal error: internal error at ", 0) == 0);
  CHECK(e.find("mini-batch of 1 values, expected 4") != std::string::npos);
}

}  // namespace
}  // namespace vnt::sequential_test_tests
