// Runtimes are independent: chains run in parallel threads, one Runtime each, draw exactly what they draw alone.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <Eigen/Dense>

#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "vnt/vnt.hpp"

namespace vnt::concurrent_runtimes_tests {
namespace {

// A bit of everything that keeps state: a mem'd procedure, a made SP, data in a plate with subsampled_mh over it,
// a scope, a parse of every kind of directive, errors (and the undo of the failed directive), and collect.
std::vector<double> chain(uint64_t seed) {
  Options options;
  options.seed = seed;
  Runtime rt(options);
  rt.execute(R"(
    [assume w (multivariate_normal (zeros 3) (* 0.5 (id_matrix 3)))]
    [assume y_x (lambda (x) (bernoulli (linear_logistic w x)))]
    [assume noise (mem (lambda (i) (scope_include 'noise i (gamma 2 1))))]
    [assume coin (make_beta_bernoulli 1 1)]
    [observe (coin) true]
  )");
  for (int i = 0; i < 200; ++i) {
    Eigen::VectorXd x(2);
    x << (i % 7) * 0.3 - 1.0, (i % 5) * 0.4 - 0.8;
    rt.observe_apply("y_x", {Datum(x)}, Datum(static_cast<double>((i * 37) % 3 == 0)));
  }
  try {
    rt.execute("[predict (normal 0 -1)]");  // fails, and is undone
  } catch (const RuntimeError&) {
  }
  rt.infer(R"((repeat 40 (do (subsampled_mh default one 20 0.05 'drift 0.2 2) (mh 'noise one 1)
                               (collect (lookup w 0) (noise 1) (coin)))))");
  std::vector<double> draws = rt.draws("(lookup w 0)");
  for (const std::string column : {"(noise 1)", "(coin)"})
    for (double d : rt.draws(column)) draws.push_back(d);
  draws.push_back(rt.predict("(noise 2)").as_double());
  return draws;
}

TEST_CASE("runtimes in parallel threads draw exactly what each draws alone") {
  constexpr size_t kThreads = 4;
  std::vector<std::vector<double>> alone(kThreads), together(kThreads);
  for (size_t t = 0; t < kThreads; ++t) alone[t] = chain(t + 1);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t) threads.emplace_back([&, t] { together[t] = chain(t + 1); });
  for (std::thread& th : threads) th.join();
  for (size_t t = 0; t < kThreads; ++t) {
    CAPTURE(t);
    REQUIRE(alone[t].size() == 121);
    CHECK(together[t] == alone[t]);
  }
  CHECK(alone[0] != alone[1]);  // the seeds matter, so the comparison above could fail
}

}  // namespace
// The diagnostics pprun --chains prints, for an application that runs its own chains.
TEST_CASE("split_rhat and multi_chain_ess of runtimes run in threads: chains that mix, and chains stuck apart") {
  auto draws = [](uint64_t seed, const char* program, const char* column) {
    Options options;
    options.seed = seed;
    Runtime rt(options);
    rt.execute(program);
    return rt.draws(column);
  };
  // mu | y = 2 is normal(1, sqrt(1/2)); two modes at x = -10 and 10 that steps of 0.1 never cross.
  const char* normal = "[assume mu (normal 0 1)] [observe (normal mu 1) 2] "
                       "[infer (repeat 2000 (do (mh default one 'drift 1 1) (collect mu)))]";
  const char* modes = "[assume x (normal 0 10)] [observe (normal (* x x) 1) 100] "
                      "[infer (repeat 500 (do (mh default one 'drift 0.1 1) (collect x)))]";
  std::vector<std::vector<double>> mixing(4), stuck(4);
  std::vector<std::thread> threads;
  for (uint64_t c = 0; c < 4; ++c)
    threads.emplace_back([&, c] {
      mixing[c] = draws(c, normal, "mu");
      stuck[c] = draws(c + 3, modes, "x");  // seeds 3..6, as pprun modes.vnt --chains 4 --seed 3
    });
  for (std::thread& t : threads) t.join();
  // Eight halves of 1000 draws with an autocorrelation time about 5: R-hat - 1 of a few 1e-3, ESS about 8000 / 5.
  CHECK(split_rhat(mixing) < 1.01);
  CHECK(multi_chain_ess(mixing) > 800);
  CHECK(split_rhat(stuck) > 1.5);
  CHECK(multi_chain_ess(stuck) < 50);
  CHECK(std::isnan(split_rhat({{1, 2, 3, 4}, {1, 2, 3}})));
}

}  // namespace vnt::concurrent_runtimes_tests
