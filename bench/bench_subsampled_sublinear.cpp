// Sublinearity of subsampled_mh (paper section 4.1.1): Bayesian logistic regression with 2 features,
// eps = 0.01, Nbatch = 100, drift proposal sd 0.1. For each N prints load time, sections touched per
// transition, seconds per transition for subsampled_mh and exact mh, peak RSS and bytes per observation.
// Usage: bench_subsampled_sublinear [max_N=1000000] [transitions=300]
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdlib>

#include "runtime/engine/engine.hpp"
#include "runtime/infer/mh.hpp"
#include "runtime/infer/subsampled_mh.hpp"

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

}  // namespace

int main(int argc, char** argv) {
  const size_t max_n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1000000;
  const int transitions = argc > 2 ? std::atoi(argv[2]) : 300;
  fmt::print("{:>8} {:>8} {:>10} {:>12} {:>10} {:>12} {:>12} {:>10} {:>9}\n", "N", "load s", "touched",
             "touched/N", "accept", "sub ms/tr", "exact ms/tr", "RSS MB", "B/obs");
  for (size_t n = 1000; n <= max_n; n *= 10) {
    double rss0 = rss_mb();
    vnt::Engine engine(1);
    auto src = std::make_shared<const vnt::SourceFile>(vnt::SourceFile{
        "bench.vnt",
        "[assume w (scope_include 'w 0 (multivariate_normal (vector 0 0 0) (* 0.1 (id_matrix 3))))]"
        "[assume y_x (lambda (x) (bernoulli (linear_logistic w x)))]"});
    engine.run_source(src);
    // The synthetic two-feature data set of the paper's Fig. 5a: two Gaussian blobs.
    vnt::Rng data(42);
    auto t0 = Clock::now();
    for (size_t i = 0; i < n; ++i) {
      bool y = data.uniform() < 0.5;
      Eigen::VectorXd x(2);
      x << (y ? 1.0 : -1.0) + data.normal(), (y ? 0.5 : -0.5) + data.normal();
      engine.observe_apply("y_x", {vnt::make_vector(std::move(x))}, y ? 1.0 : 0.0);
    }
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
    vnt::SubsampledState state;
    // Burn in with exact steps so every N starts near the posterior mode.
    vnt::MhOptions mo;
    mo.drift_sigma = 0.1;
    int exact_runs = n <= 100000 ? 30 : 5;
    auto te = Clock::now();
    for (int i = 0; i < exact_runs; ++i) vnt::mh_transition(engine.trace(), spec, mo);
    double exact_ms = since(te) / exact_runs * 1e3;
    auto ts = Clock::now();
    for (int i = 0; i < transitions; ++i) vnt::subsampled_mh_transition(engine.trace(), spec, so, state);
    double sub_ms = since(ts) / transitions * 1e3;
    const auto& st = state.stats;
    double touched = static_cast<double>(st.sections_visited) / static_cast<double>(st.transitions);
    fmt::print("{:>8} {:>8.2f} {:>10.0f} {:>12.4f} {:>10.3f} {:>12.3f} {:>12.3f} {:>10.0f} {:>9.0f}\n", n, load,
               touched, touched / static_cast<double>(n),
               static_cast<double>(st.accepted) / static_cast<double>(st.transitions), sub_ms, exact_ms,
               peak_rss_mb(), bytes_per_obs);
    std::fflush(stdout);
  }
  return 0;
}
