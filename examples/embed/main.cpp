// Embedding vnt: Bayesian logistic regression on synthetic data, loaded row by row from C++.
// SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <vector>
#include <vnt/vnt.hpp>

int main() {
  vnt::Options options;
  options.seed = 7;  // same seed, same draws
  vnt::Runtime rt(options);

  // Model: w = (bias, w1, w2) with a standard normal prior, in scope 'w so inference can target it as a block;
  // (linear_logistic w x) = logistic(w[0] + w[1] x1 + w[2] x2) since w is one longer than x.
  rt.assume("w", "(scope_include 'w 0 (multivariate_normal (vector 0 0 0) (id_matrix 3)))");
  rt.assume("y_x", "(lambda (x) (flip (linear_logistic w x)))");

  // 200 synthetic rows from known weights, observed without building any program text.
  const double truth[3] = {-0.5, 1.5, -1.0};
  std::mt19937_64 gen(2024);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unif;
  for (int i = 0; i < 200; ++i) {
    Eigen::VectorXd x(2);
    x << normal(gen), normal(gen);
    double p = 1 / (1 + std::exp(-(truth[0] + truth[1] * x[0] + truth[2] * x[1])));
    rt.observe_apply("y_x", {vnt::Datum(x)}, vnt::Datum(unif(gen) < p));
  }

  // A mistake in the middle of a session: the call throws, the runtime is left exactly as it was.
  try {
    rt.assume("sigma", "(normal 0 -1)");
  } catch (const vnt::RuntimeError& e) {
    std::printf("caught %s at %s: %s\n", e.kind().c_str(), e.location().c_str(), e.message().c_str());
  }
  std::printf("still assumed after the error: w = %s\n", rt.report("w").to_string().c_str());

  // Burn in, then collect 500 draws of w (columns w[0], w[1], w[2]).
  rt.infer("(mh w all 'drift 0.15 500)");
  rt.infer("(repeat 500 (do (mh w all 'drift 0.15 2) (collect w)))");

  std::printf("draws: %zu\n", rt.draw_rows());
  for (int j = 0; j < 3; ++j) {
    std::string column = "w[" + std::to_string(j) + "]";
    std::vector<double> d = rt.draws(column);
    double mean = std::accumulate(d.begin(), d.end(), 0.0) / static_cast<double>(d.size());
    std::printf("posterior mean %s = %+.3f (true %+.1f)\n", column.c_str(), mean, truth[j]);
  }
  vnt::Datum p = rt.sample("(linear_logistic w (vector 1 -1))");
  std::printf("P(y | x = (1, -1)) under the last draw = %.3f\n", p.as_double());
  return 0;
}
