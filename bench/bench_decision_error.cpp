// How often the austerity test's decision differs from exact MH's, per proposal, on the synthetic logistic
// regression of bench_subsampled_sublinear (2 features, proposal sd 0.1, Nbatch 100) with the current value at
// the posterior mode: every l_i is computed, then the sequential test draws them in random order. Explains the
// acceptance rates of subsampled_mh there: the test runs up to N/Nbatch looks, each with error up to eps, so
// the error of a decision can be several times eps (the paper's Eq. 11 bounds it by a union over the looks).
// Also shown: the option that spends eps over the whole decision ('eps_per 'decision).
// Usage: bench_decision_error [N=1000000] [proposals=300]
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <Eigen/Dense>
#include <cmath>
#include <cstdlib>
#include <numeric>

#include "runtime/core/rng.hpp"
#include "runtime/infer/austerity/sequential_test.hpp"

namespace {

double softplus(double t) { return t > 0 ? t + std::log1p(std::exp(-t)) : std::log1p(std::exp(t)); }

}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 1000000;
  const int proposals = argc > 2 ? std::atoi(argv[2]) : 300;
  vnt::Rng rng(42);
  Eigen::Matrix3Xd x(3, n);
  Eigen::VectorXd y(n);
  for (long i = 0; i < n; ++i) {
    bool c = rng.uniform() < 0.5;
    y[i] = c ? 1 : 0;
    x.col(i) << 1.0, (c ? 1.0 : -1.0) + rng.normal(), (c ? 0.5 : -0.5) + rng.normal();
  }
  // Posterior mode under w ~ N(0, 0.1 I) by Newton's method.
  Eigen::Vector3d w = Eigen::Vector3d::Zero();
  Eigen::Matrix3d hess;
  for (int it = 0; it < 30; ++it) {
    Eigen::Vector3d grad = -10.0 * w;
    hess = -10.0 * Eigen::Matrix3d::Identity();
    for (long i = 0; i < n; ++i) {
      double p = 1 / (1 + std::exp(-w.dot(x.col(i))));
      grad += (y[i] - p) * x.col(i);
      hess -= p * (1 - p) * x.col(i) * x.col(i).transpose();
    }
    w -= hess.ldlt().solve(grad);
  }
  auto loglik = [&](const Eigen::Vector3d& v) {
    Eigen::VectorXd z = x.transpose() * v, out(n);
    for (long i = 0; i < n; ++i) out[i] = y[i] * z[i] - softplus(z[i]);
    return out;
  };
  const Eigen::VectorXd base = loglik(w);
  Eigen::Vector3d sd = (-hess).inverse().diagonal().cwiseSqrt();
  fmt::print("N = {}, posterior sd of w = ({:.4f} {:.4f} {:.4f}), proposal sd 0.1, Nbatch 100\n", n, sd[0], sd[1], sd[2]);
  fmt::print("{:>8} {:>13} {:>8} {:>13} {:>9} {:>8}\n", "eps", "eps bounds", "accept", "exact accept", "disagree",
             "touched");
  for (auto spending : {vnt::ErrorSpending::kPerTest, vnt::ErrorSpending::kPerDecision})
  for (double eps : {0.1, 0.05, 0.01, 0.001}) {
    vnt::TQuantileCache cache(eps, 100, spending);
    std::vector<uint32_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0u);
    int accept = 0, exact = 0, disagree = 0;
    double touched = 0;
    for (int r = 0; r < proposals; ++r) {
      Eigen::Vector3d wp = w;
      for (int j = 0; j < 3; ++j) wp[j] += 0.1 * rng.normal();
      const Eigen::VectorXd l = loglik(wp) - base;
      double alpha_g = -0.5 * 10.0 * (wp.squaredNorm() - w.squaredNorm());
      double mu0 = (std::log(rng.uniform()) - alpha_g) / static_cast<double>(n);
      bool truth = l.mean() >= mu0;
      size_t k = 0;
      auto res = vnt::sequential_test(vnt::SequentialTestConfig{mu0, static_cast<size_t>(n), 100, eps, 1, spending}, cache, [&] {
        size_t j = k + rng.below(static_cast<uint64_t>(n) - k);
        std::swap(order[k], order[j]);
        return l[order[k++]];
      });
      accept += res.accept;
      exact += truth;
      disagree += res.accept != truth;
      touched += static_cast<double>(res.n_used);
    }
    fmt::print("{:>8} {:>13} {:>8.3f} {:>13.3f} {:>9.3f} {:>8.0f}\n", eps,
               spending == vnt::ErrorSpending::kPerTest ? "each test" : "the decision", accept / double(proposals),
               exact / double(proposals), disagree / double(proposals), touched / proposals);
  }
  return 0;
}
