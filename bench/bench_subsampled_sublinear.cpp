// Sublinearity of subsampled_mh (paper section 4.1.1): Bayesian logistic regression with 2 features,
// eps = 0.01, Nbatch = 100, drift proposal sd 0.1. For each N prints load time, memory, and for two regimes
// the sections touched and milliseconds per transition:
//  - "burn-in": the chain starts from a draw of the prior (many proposals are improvements);
//  - "stationary": the chain starts at the posterior mode (found by Newton's method here), where the paper's
//    fixed proposal is many posterior sds wide and almost every move is rejected.
// "touched" is the mean number of sections a transition touched, "median" their median. Exact mh (same kernel,
// eps 0) is timed at the mode for comparison. Each N is run with the paper's rule (eps bounds each test, "each
// test"), with eps spent over the looks of one decision ("decision", 'eps_per 'decision) and with the paper's
// rule on Taylor control variates ("proxy", 'proxy 'taylor); the last lines give the ratio of ms per transition
// at the largest N to that at N = 1e4 (the target: <= 5x). "builds" counts the passes over the data that
// built control variates, in burn-in/stationary.
// Data: by default the two Gaussian blobs of examples/bayes_lr/make_synthetic.py; with three more arguments
// w0 w1 w2, standard normal features with labels drawn from the model itself at those weights (bias first).
// Usage: bench_subsampled_sublinear [max_N=1000000] [transitions=300] [w0 w1 w2]
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "runtime/engine/engine.hpp"
#include "runtime/infer/mh.hpp"
#include "runtime/infer/subsampled_mh.hpp"
#include "runtime/regen/regen.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

double rss_mb() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<double>(resident) * 4096.0 / (1024.0 * 1024.0);
}

/// The posterior mode of w ~ N(0, 0.1 I), y_i ~ bernoulli(logistic(w0 + w1 x_i1 + w2 x_i2)), by Newton's method.
Eigen::Vector3d posterior_mode(const Eigen::Matrix3Xd& xt, const Eigen::VectorXd& y) {
  Eigen::Vector3d w = Eigen::Vector3d::Zero();
  for (int it = 0; it < 30; ++it) {
    Eigen::Vector3d grad = -10.0 * w;
    Eigen::Matrix3d hess = -10.0 * Eigen::Matrix3d::Identity();
    for (Eigen::Index i = 0; i < xt.cols(); ++i) {
      double p = 1 / (1 + std::exp(-w.dot(xt.col(i))));
      grad += (y[i] - p) * xt.col(i);
      hess -= p * (1 - p) * xt.col(i) * xt.col(i).transpose();
    }
    Eigen::Vector3d step = hess.ldlt().solve(grad);
    w -= step;
    if (step.norm() < 1e-12) break;
  }
  return w;
}

/// Moves the principal node of scope w to `value` (a forced proposal through the trace's own regen).
void set_w(vnt::Trace& trace, const vnt::BlockSpec& spec, const Eigen::Vector3d& value) {
  vnt::Node* v = vnt::select_block(trace, spec).principals.at(0);
  vnt::ProposalKernels kernels;
  kernels[v] = vnt::ProposalKernel{vnt::ProposalKernel::Kind::kForce, 0, vnt::make_vector(value)};
  vnt::Node* principals[] = {v};
  vnt::Scaffold s = vnt::build_scaffold(trace, principals, std::move(kernels));
  vnt::Db db(trace);
  vnt::detach_and_extract(trace, s, db);
  vnt::regen_and_attach(trace, s, false, db);
}

struct Run {
  double touched = 0, median = 0, ms = 0, accept = 0;
  uint64_t builds = 0;  // 'proxy 'taylor: passes over the data to build control variates
};

Run run(vnt::Trace& trace, const vnt::BlockSpec& spec, const vnt::SubsampledOptions& so, int transitions) {
  vnt::SubsampledState state;
  // Sections touched by each transition, read from the stats between transitions (a few ns each): their median
  // against their mean shows how much of the mean a few long decisions make.
  std::vector<uint64_t> touched(static_cast<size_t>(transitions));
  auto t0 = Clock::now();
  for (auto& t : touched) {
    t = state.stats.sections_visited;
    vnt::subsampled_mh_transition(trace, spec, so, state);
    t = state.stats.sections_visited - t;
  }
  double ms = since(t0) / transitions * 1e3;
  std::nth_element(touched.begin(), touched.begin() + transitions / 2, touched.end());
  const auto& st = state.stats;
  double tr = static_cast<double>(st.transitions);
  return {static_cast<double>(st.sections_visited) / tr, static_cast<double>(touched[transitions / 2]), ms,
          static_cast<double>(st.accepted) / tr, st.proxy_builds};
}

}  // namespace

int main(int argc, char** argv) {
  const size_t max_n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1000000;
  const int transitions = argc > 2 ? std::atoi(argv[2]) : 300;
  if (argc == 4 || argc == 5 || argc > 6) {
    fmt::print(stderr, "usage: {} [max_N] [transitions] [w0 w1 w2]\n", argv[0]);
    return 2;
  }
  const bool from_model = argc == 6;
  const Eigen::Vector3d w_data =
      from_model ? Eigen::Vector3d(std::atof(argv[3]), std::atof(argv[4]), std::atof(argv[5])) : Eigen::Vector3d::Zero();
  if (from_model) fmt::print("labels drawn from the model at w = ({}, {}, {}), features N(0, I)\n", w_data[0], w_data[1], w_data[2]);
  fmt::print("{:>8} {:>9} {:>7} {:>7} {:>6} | {:>9} {:>7} {:>7} {:>9} | {:>9} {:>7} {:>7} {:>9} {:>9} | {}\n", "N",
             "eps for", "load s", "RSS MB", "B/obs", "touched", "median", "accept", "ms/tr", "touched", "median",
             "accept", "ms/tr", "exact ms", "builds");
  fmt::print("{:>42}|{:^37}|{:^47}|\n", "", "burn-in (from a prior draw)", "stationary (from the posterior mode)");
  struct Config {
    const char* name;
    vnt::ErrorSpending spending;
    bool proxies;
  };
  const Config configs[] = {{"each test", vnt::ErrorSpending::kPerTest, false},
                            {"decision", vnt::ErrorSpending::kPerDecision, false},
                            {"proxy", vnt::ErrorSpending::kPerTest, true}};
  constexpr int kConfigs = 3;
  // ms per transition at N = 1e4 and at the largest N, per configuration and regime (burn-in, stationary).
  double at_1e4[kConfigs][2] = {}, at_max[kConfigs][2] = {};
  size_t largest = 0;
  for (size_t n = 1000; n <= max_n; n *= 10)
    for (int rule = 0; rule < kConfigs; ++rule) {
      // The synthetic two-feature data set of the paper's Fig. 5a: two Gaussian blobs, or data drawn from the
      // model (kept here for Newton's method, and made before the runtime so its memory is not counted per
      // observation).
      vnt::Rng data(42);
      Eigen::Matrix3Xd xt(3, static_cast<Eigen::Index>(n));
      Eigen::VectorXd ys(static_cast<Eigen::Index>(n));
      for (Eigen::Index i = 0; i < xt.cols(); ++i) {
        bool y;
        if (from_model) {
          xt.col(i) << 1.0, data.normal(), data.normal();
          y = data.uniform() < 1 / (1 + std::exp(-w_data.dot(xt.col(i))));
        } else {
          y = data.uniform() < 0.5;
          double x1 = (y ? 1.0 : -1.0) + data.normal();
          xt.col(i) << 1.0, x1, (y ? 0.5 : -0.5) + data.normal();
        }
        ys[i] = y ? 1.0 : 0.0;
      }
      double rss0 = rss_mb();
      vnt::Engine engine(1);
      auto src = std::make_shared<const vnt::SourceFile>(vnt::SourceFile{
          "bench.vnt",
          "[assume w (scope_include 'w 0 (multivariate_normal (vector 0 0 0) (* 0.1 (id_matrix 3))))]"
          "[assume y_x (lambda (x) (bernoulli (linear_logistic w x)))]"});
      engine.run_source(src);
      auto t0 = Clock::now();
      for (Eigen::Index i = 0; i < xt.cols(); ++i)
        engine.observe_apply("y_x", {vnt::make_vector(xt.col(i).tail(2))}, ys[i]);
      double load = since(t0);
      double bytes_per_obs = (rss_mb() - rss0) * 1024.0 * 1024.0 / static_cast<double>(n);
      vnt::BlockSpec spec;
      spec.scope = "w";
      spec.mode = vnt::BlockSpec::Mode::kAll;
      spec.kernel = "subsampled_mh";
      vnt::SubsampledOptions so;
      so.batch = 100;
      so.epsilon = 0.01;
      so.drift_sigma = 0.1;
      so.spending = configs[rule].spending;
      so.proxies = configs[rule].proxies;
      Run burn = run(engine.trace(), spec, so, transitions);

      set_w(engine.trace(), spec, posterior_mode(xt, ys));
      Run stat = run(engine.trace(), spec, so, transitions);
      vnt::MhOptions mo;
      mo.drift_sigma = 0.1;
      int exact_runs = n <= 100000 ? 30 : 5;
      auto te = Clock::now();
      for (int i = 0; i < exact_runs; ++i) vnt::mh_transition(engine.trace(), spec, mo);
      double exact_ms = since(te) / exact_runs * 1e3;
      fmt::print(
          "{:>8} {:>9} {:>7.2f} {:>7.0f} {:>6.0f} | {:>9.0f} {:>7.0f} {:>7.3f} {:>9.3f} | {:>9.0f} {:>7.0f} {:>7.3f} "
          "{:>9.3f} {:>9.3f} | {}/{}\n",
          n, configs[rule].name, load, peak_rss_mb(), bytes_per_obs, burn.touched, burn.median, burn.accept, burn.ms,
          stat.touched, stat.median, stat.accept, stat.ms, exact_ms, burn.builds, stat.builds);
      std::fflush(stdout);
      if (n == 10000) at_1e4[rule][0] = burn.ms, at_1e4[rule][1] = stat.ms;
      at_max[rule][0] = burn.ms, at_max[rule][1] = stat.ms;
      largest = n;
    }
  if (largest > 10000)
    for (int rule = 0; rule < kConfigs; ++rule)
      fmt::print("{:<9}: ms/tr at N = {} over N = 1e4: burn-in {:.1f}x, stationary {:.1f}x\n", configs[rule].name,
                 largest, at_max[rule][0] / at_1e4[rule][0],
                 at_max[rule][1] / at_1e4[rule][1]);
  return 0;
}
