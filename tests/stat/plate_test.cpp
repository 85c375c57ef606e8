// Posterior of a conjugate normal mean whose observations are plate rows, scored three ways: exact mh through the
// partitioned scaffold (rows as local sections), mh on a block whose general scaffold absorbs the change in the
// plate's cached total, and subsampled_mh with eps = 0, which must make the decisions of exact mh.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/normal.hpp>

#include <cmath>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "runtime/infer/mh.hpp"
#include "runtime/infer/subsampled_mh.hpp"
#include "runtime/trace/plate.hpp"
#include "tests/support/engine_fixture.hpp"
#include "tests/support/run_program.hpp"
#include "tests/support/stat_extra.hpp"

// Tolerances (as in normal_normal_test.cpp): the sample mean within 4 posterior sd / sqrt(ESS) of the exact mean,
// the sample sd within 4 standard errors sd sqrt((kurtosis - 1) / (4 ESS of squares)), the KS p-value against
// the exact cdf (the ESS as sample size) at least 1e-4: each fails a correct sampler with probability about 1e-4.
// The seeds are fixed, so the suite is deterministic.

namespace vnt::test::plate_tests {
namespace {

// mu ~ normal(0, 1); y_i ~ normal(mu, 1), i < 50. y_0 is an ordinary observe, y_1..y_49 are rows of one plate
// (observe_apply of (lambda () (normal mu 1))), so mu's border has a plate and a node child, and exact mh takes
// the partitioned path (a border with only plate rows takes the general scaffold, which the second case covers).
constexpr size_t kRows = 50;
constexpr size_t kBurnIn = 1000;
constexpr size_t kTransitions = 20000;

std::vector<double> data() {
  Rng rng(101);
  std::vector<double> ys(kRows);
  for (double& y : ys) y = 0.8 + rng.normal();
  return ys;
}

struct Gaussian {
  double mean, sd;
};

/// The posterior of mu given `n` rows of total `sum` (prior precision 1, noise precision 1 per row).
Gaussian posterior(size_t n, double sum) {
  const double precision = 1.0 + static_cast<double>(n);
  return {sum / precision, 1 / std::sqrt(precision)};
}

std::string model(const std::string& extra) {
  return "[assume mu (scope_include 'mu 0 (normal 0 1))]\n"
         "[assume f (lambda () (normal mu 1))]\n" +
         extra + fmt::format("[observe (normal mu 1) {}]\n", data()[0]);
}

/// The model with every row loaded, on an engine seeded with `seed`.
std::unique_ptr<ProgramRun> load(const std::string& extra, uint64_t seed) {
  auto prog = std::make_unique<ProgramRun>(model(extra), seed, "plate.vnt");
  const std::vector<double> ys = data();
  for (size_t i = 1; i < kRows; ++i) prog->engine().observe_apply("f", {}, Value(ys[i]));
  const DirectiveRecord& last = prog->engine().directives().back();
  REQUIRE(last.root != nullptr);
  REQUIRE(last.root->kind == NodeKind::kPlate);
  REQUIRE(as_plate(last.root)->rows == kRows - 1);
  return prog;
}

BlockSpec mu_all(const char* kernel) {
  BlockSpec s;
  s.scope = "mu";
  s.mode = BlockSpec::Mode::kAll;
  s.kernel = std::string(kernel);
  return s;
}

/// Checks the draws of mu against the exact posterior, and that wrong targets would be told apart.
void check_posterior(const std::vector<double>& mu) {
  const std::vector<double> ys = data();
  const double sum = std::accumulate(ys.begin(), ys.end(), 0.0);
  const Gaussian post = posterior(kRows, sum);
  check_mean(mu, post.mean, post.sd);
  check_sd(mu, post.sd);
  const boost::math::normal_distribution<> exact(post.mean, post.sd);
  check_ks(mu, [&](double x) { return boost::math::cdf(exact, x); });
  // What would fail: the prior; the posterior without the plate's rows (only y_0); and the posterior with the
  // plate's rows counted twice (precision 1 + 1 + 2 x 49, e.g. a total both cached and rescored).
  expect_rejected(evaluate_mean(mu, 0.0, post.sd));
  const Gaussian without_plate = posterior(1, ys[0]);
  expect_rejected(evaluate_mean(mu, without_plate.mean, post.sd));
  const Gaussian twice{(2 * sum - ys[0]) / (2.0 + 2 * (kRows - 1)), 1 / std::sqrt(2.0 + 2 * (kRows - 1))};
  expect_rejected(evaluate_sd(mu, twice.sd));
  const boost::math::normal_distribution<> twice_cdf(twice.mean, twice.sd);
  expect_rejected(evaluate_ks(mu, [&](double x) { return boost::math::cdf(twice_cdf, x); }));
}

TEST_CASE("plate rows: exact mh through the partitioned scaffold reaches the conjugate posterior") {
  auto prog = load("", 21);
  Engine& e = prog->engine();
  // The border of mu has 50 sections, 49 of them plate rows, and exact mh partitions at it (this is one move).
  const BlockChoice choice = select_block(e.trace(), mu_all("mh"));
  REQUIRE(choice.principals.size() == 1);
  CHECK(find_border(choice.principals[0]).n == kRows);
  CHECK(partitioned_mh_transition(e.trace(), choice, mu_all("mh"), 0.3).has_value());
  run(e, fmt::format("[infer (repeat {} (do (mh mu all 'drift 0.3 1) (collect mu)))]", kTransitions));
  check_posterior(prog->column("mu", kBurnIn));
}

TEST_CASE("plate rows: mh on a block with another choice scores the plate in the general scaffold") {
  // (mh default all) proposes to mu and z together: two principals, so no partition; the plate is an absorbing
  // node of the general scaffold, scored by its cached total before and a pass over its rows after.
  auto prog = load("[assume z (normal 0 1)]\n", 22);
  Engine& e = prog->engine();
  CHECK(select_block(e.trace(), [] {
          BlockSpec s;
          s.scope = "default";
          s.mode = BlockSpec::Mode::kAll;
          return s;
        }()).principals.size() == 2);
  run(e, fmt::format("[infer (repeat {} (do (mh default all 'drift 0.2 1) (collect mu z)))]", kTransitions));
  check_posterior(prog->column("mu", kBurnIn));
  // z is independent of the data: its prior.
  const std::vector<double> z = prog->column("z", kBurnIn);
  check_mean(z, 0, 1);
  check_sd(z, 1);
}

TEST_CASE("plate rows: subsampled_mh with eps = 0 makes exact mh's decisions and reaches the posterior") {
  auto sub = load("", 23);
  auto exact = load("", 23);
  SubsampledOptions so{.batch = 10, .epsilon = 0, .drift_sigma = 0.3};
  SubsampledState state;
  exact->engine().trace().rng().split();  // mirror the stream subsampled_mh splits off for its section order
  MhOptions mo;
  mo.drift_sigma = 0.3;
  std::vector<double> mu;
  size_t mismatches = 0;
  for (size_t i = 0; i < kTransitions; ++i) {
    // The same proposals and u; the sums over sections differ only in order (random vs in order), so a decision
    // could differ only if log u fell within ~1e-13 of the log ratio.
    const bool a = subsampled_mh_transition(sub->engine().trace(), mu_all("subsampled_mh"), so, state);
    const bool b = mh_transition(exact->engine().trace(), mu_all("mh"), mo);
    mismatches += a != b ? 1 : 0;
    const double m = std::get<double>(sub->engine().report("mu"));
    if (i >= kBurnIn) mu.push_back(m);
  }
  CHECK(mismatches == 0);
  CHECK(std::get<double>(sub->engine().report("mu")) == std::get<double>(exact->engine().report("mu")));
  CHECK(state.stats.exact_transitions == 0);
  CHECK(state.stats.sections_visited == kTransitions * kRows);  // eps = 0 looks at every row
  check_posterior(mu);
}

}  // namespace
}  // namespace vnt::test::plate_tests
