// subsampled_mh 'proxy 'taylor on the Fig. 3 logistic regression: the chain tested on Taylor control variates
// reaches the posterior of a long exact mh run on the same rows while touching a fraction of the data.
// SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "runtime/engine/engine.hpp"
#include "runtime/infer/mh.hpp"
#include "runtime/infer/subsampled_mh.hpp"
#include "tests/support/engine_fixture.hpp"
#include "tests/support/stat_extra.hpp"
#include "tests/support/stat_seed.hpp"

// Tolerances: means and sds within 4 combined standard errors (from each chain's ESS) plus a bias allowance of
// 0.1 posterior sd. With proxies the residuals l_i - p_i are about 1e-4 of the l_i here, so a t-test on them at
// eps = 0.01 errs rarely and the chain's bias is well inside the allowance; the negative controls (the prior,
// half the data) sit many allowances away.

namespace vnt::test::subsampled_proxy_tests {
namespace {

constexpr size_t kBurnIn = 1000;

std::vector<std::vector<double>> run_chain(size_t rows, bool subsampled, size_t transitions, uint64_t seed,
                                           SubsampledStats* stats = nullptr) {
  Engine e(stat_seed(seed));
  run(e,
      "[assume w (scope_include 'w 0 (multivariate_normal (zeros 3) (* 0.1 (id_matrix 3))))]"
      "[assume y_x (lambda (x) (bernoulli (linear_logistic w x)))]");
  Rng data(11);  // the same rows for every chain: labels from w = (0.3, 1.0, -0.7)
  for (size_t i = 0; i < rows; ++i) {
    const double x1 = data.normal(), x2 = data.normal();
    const double p = 1 / (1 + std::exp(-(0.3 + 1.0 * x1 - 0.7 * x2)));
    e.observe_apply("y_x", {make_vector(Eigen::Vector2d(x1, x2))}, Value(data.uniform() < p ? 1.0 : 0.0));
  }
  BlockSpec spec;
  spec.scope = "w";
  spec.mode = BlockSpec::Mode::kAll;
  spec.kernel = std::string(subsampled ? "subsampled_mh" : "mh");
  SubsampledOptions so{.batch = 100, .epsilon = 0.01, .drift_sigma = 0.15, .proxies = true};
  SubsampledState state;
  MhOptions mo;
  mo.drift_sigma = 0.15;
  std::vector<std::vector<double>> w(3);
  for (size_t t = 0; t < transitions; ++t) {
    if (subsampled)
      subsampled_mh_transition(e.trace(), spec, so, state);
    else
      mh_transition(e.trace(), spec, mo);
    const Eigen::VectorXd& v = *std::get<VectorPtr>(e.report("w"));
    for (int d = 0; d < 3; ++d) w[d].push_back(v[d]);
  }
  if (stats != nullptr) *stats = state.stats;
  return w;
}

std::vector<double> tail(const std::vector<double>& xs) { return {xs.begin() + kBurnIn, xs.end()}; }

TEST_CASE("'proxy 'taylor: subsampled_mh with eps 0.01 and Nbatch 100 matches a long exact mh run") {
  constexpr size_t kRows = 800, kTransitions = 40000;
  SubsampledStats stats;
  const auto sub = run_chain(kRows, true, kTransitions, 7, &stats);
  const auto exact = run_chain(kRows, false, 3 * kTransitions, 8);
  const auto half = run_chain(kRows / 2, false, 3 * kTransitions, 9);
  // Most decisions take one mini-batch: the residuals' spread is tiny next to the threshold's distance.
  const double touched = static_cast<double>(stats.sections_visited) / static_cast<double>(stats.sections_total);
  MESSAGE("fraction of the rows touched: " << touched << ", proxies built: " << stats.proxy_builds
                                               << ", decisions on residuals: " << stats.proxy_decisions);
  CHECK(touched < 0.2);
  CHECK(stats.exact_transitions == 0);
  CHECK(stats.proxy_builds >= 1);
  CHECK(stats.proxy_decisions > kTransitions / 2);  // built once rows beyond first looks paid for them
  for (int d = 0; d < 3; ++d) {
    const Estimate s = estimate(tail(sub[d])), x = estimate(tail(exact[d])), h = estimate(tail(half[d]));
    MESSAGE("w[" << d << "]: exact mh " << x.mean << " +- " << x.sd << " (ESS " << x.ess << "); proxy " << s.mean
                 << " +- " << s.sd << " (ESS " << s.ess << ")");
    const double allowance = 0.1 * x.sd;
    check_agree(fmt::format("w[{}] mean", d), s.mean, s.se_mean, x.mean, x.se_mean, allowance);
    check_agree(fmt::format("w[{}] sd", d), s.sd, s.se_sd, x.sd, x.se_sd, allowance);
    // What would fail: the prior mean, and (for the sd) the posterior given half the rows.
    expect_rejected(evaluate_agree("mean vs the prior's", s.mean, s.se_mean, 0, 0, allowance));
    expect_rejected(evaluate_agree("sd vs half the data", s.sd, s.se_sd, h.sd, h.se_sd, allowance));
  }
}

}  // namespace
}  // namespace vnt::test::subsampled_proxy_tests
