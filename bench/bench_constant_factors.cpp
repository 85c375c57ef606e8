// Constant factors against hand-written code doing the same arithmetic, in one process run:
// exact mh on Bayesian logistic regression (D = 50, N = 1e5) vs an Eigen loop computing the same
// log-likelihood ratio (both as in the paper, old and new per datum, and with the current log-likelihood cached,
// as vnt does), and subsampled_mh vs a hand-written austerity loop (same test, same data).
// Usage: bench_constant_factors [N=100000] [D=50] [transitions=20]
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <numeric>

#include "runtime/engine/engine.hpp"
#include "runtime/infer/austerity/sequential_test.hpp"
#include "runtime/infer/mh.hpp"
#include "runtime/infer/subsampled_mh.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// log p(y | w, x) for logistic regression with a bias w[0], computed stably (softplus).
double loglik(const Eigen::VectorXd& w, const double* x, int d, double y) {
  double z = w[0];
  for (int j = 0; j < d; ++j) z += w[j + 1] * x[j];
  double softplus = z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z));
  return y * z - softplus;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 100000;
  const int d = argc > 2 ? std::atoi(argv[2]) : 50;
  const int transitions = argc > 3 ? std::atoi(argv[3]) : 20;
  vnt::Rng data(7);
  Eigen::MatrixXd x(d, n);  // column-major: one datum per column, contiguous
  Eigen::VectorXd y(n), truth(d + 1);
  for (int j = 0; j <= d; ++j) truth[j] = data.normal() * 0.3;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < d; ++j) x(j, i) = data.normal();
    double z = truth[0] + truth.tail(d).dot(x.col(i));
    y[i] = data.uniform() < 1 / (1 + std::exp(-z)) ? 1 : 0;
  }

  vnt::Engine engine(1);
  engine.run_source(std::make_shared<const vnt::SourceFile>(vnt::SourceFile{
      "bench.vnt", fmt::format("[assume w (scope_include 'w 0 (multivariate_normal (zeros {0}) (* 0.1 (id_matrix {0}))))]"
                               "[assume y_x (lambda (x) (bernoulli (linear_logistic w x)))]",
                               d + 1)}));
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) engine.observe_apply("y_x", {vnt::make_vector(x.col(i))}, y[i]);
  fmt::print("loaded N = {} D = {} in {:.2f} s\n", n, d, since(t0));

  vnt::BlockSpec spec;
  spec.scope = "w";
  spec.mode = vnt::BlockSpec::Mode::kAll;
  spec.kernel = "mh";
  vnt::MhOptions mo;
  mo.drift_sigma = 0.01;
  auto te = Clock::now();
  for (int t = 0; t < transitions; ++t) vnt::mh_transition(engine.trace(), spec, mo);
  double vnt_exact = since(te) / transitions;

  // The same arithmetic by hand: the full log-likelihood ratio of a random-walk proposal, plus the prior.
  vnt::Rng rng(3);
  Eigen::VectorXd w = Eigen::VectorXd::Zero(d + 1);
  double sink = 0;
  auto th = Clock::now();
  for (int t = 0; t < transitions; ++t) {
    Eigen::VectorXd wp = w;
    for (int j = 0; j <= d; ++j) wp[j] += 0.01 * rng.normal();
    double ratio = -0.5 * (wp.squaredNorm() - w.squaredNorm()) / 0.1;
    for (int i = 0; i < n; ++i) ratio += loglik(wp, x.col(i).data(), d, y[i]) - loglik(w, x.col(i).data(), d, y[i]);
    if (std::log(rng.uniform()) < ratio) w = wp;
    sink += w[0];
  }
  double hand_exact = since(th) / transitions;

  // The same with the current log-likelihood cached, as vnt's plates do: one log-likelihood per datum.
  w.setZero();
  double current = 0;
  for (int i = 0; i < n; ++i) current += loglik(w, x.col(i).data(), d, y[i]);
  auto tc = Clock::now();
  for (int t = 0; t < transitions; ++t) {
    Eigen::VectorXd wp = w;
    for (int j = 0; j <= d; ++j) wp[j] += 0.01 * rng.normal();
    double proposed = 0;
    for (int i = 0; i < n; ++i) proposed += loglik(wp, x.col(i).data(), d, y[i]);
    double ratio = -0.5 * (wp.squaredNorm() - w.squaredNorm()) / 0.1 + proposed - current;
    if (std::log(rng.uniform()) < ratio) {
      w = wp;
      current = proposed;
    }
    sink += w[0];
  }
  double hand_cached = since(tc) / transitions;

  // subsampled_mh vs a hand-written austerity loop with the same test (eps 0.01, Nbatch 100).
  vnt::SubsampledOptions so;
  so.batch = 100;
  so.epsilon = 0.01;
  so.drift_sigma = 0.01;
  vnt::SubsampledState state;
  spec.kernel = "subsampled_mh";
  auto ts = Clock::now();
  for (int t = 0; t < transitions * 5; ++t) vnt::subsampled_mh_transition(engine.trace(), spec, so, state);
  double vnt_sub = since(ts) / (transitions * 5);
  double vnt_touched = static_cast<double>(state.stats.sections_visited) / static_cast<double>(state.stats.transitions);

  std::vector<uint32_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0u);
  vnt::TQuantileCache cache(0.01, 100);
  size_t touched = 0;
  auto ta = Clock::now();
  for (int t = 0; t < transitions * 5; ++t) {
    Eigen::VectorXd wp = w;
    for (int j = 0; j <= d; ++j) wp[j] += 0.01 * rng.normal();
    double alpha_g = -0.5 * (wp.squaredNorm() - w.squaredNorm()) / 0.1;
    double mu0 = (std::log(rng.uniform()) - alpha_g) / n;
    size_t k = 0;
    auto r = vnt::sequential_test(vnt::SequentialTestConfig{mu0, static_cast<size_t>(n), 100, 0.01, 1}, cache, [&] {
      size_t j = k + rng.below(static_cast<uint64_t>(n) - k);
      std::swap(order[k], order[j]);
      uint32_t i = order[k++];
      return loglik(wp, x.col(i).data(), d, y[i]) - loglik(w, x.col(i).data(), d, y[i]);
    });
    touched += r.n_used;
    if (r.accept) w = wp;
  }
  double hand_sub = since(ta) / (transitions * 5);

  fmt::print("{:<28} {:>12} {:>12} {:>8}\n", "", "vnt ms/tr", "hand ms/tr", "ratio");
  fmt::print("{:<28} {:>12.3f} {:>12.3f} {:>8.1f}\n", "exact mh", vnt_exact * 1e3, hand_exact * 1e3, vnt_exact / hand_exact);
  fmt::print("{:<28} {:>12.3f} {:>12.3f} {:>8.1f}\n", "exact mh / cached baseline", vnt_exact * 1e3, hand_cached * 1e3,
             vnt_exact / hand_cached);
  fmt::print("{:<28} {:>12.3f} {:>12.3f} {:>8.1f}\n", "subsampled_mh / austerity", vnt_sub * 1e3, hand_sub * 1e3, vnt_sub / hand_sub);
  fmt::print("sections touched per transition: vnt {:.0f}, hand {:.0f}  (checksum {:.3f})\n", vnt_touched,
             static_cast<double>(touched) / (transitions * 5), sink);
  return 0;
}
