// Taylor control variates of fused logistic plate rows ('proxy 'taylor): the closed-form sum agrees with the
// rows' own proxies, residuals are tiny near the reference, and with eps = 0 subsampled_mh on residuals makes
// exactly the decisions of exact mh, also after rows are added and the proxies are rebuilt.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "runtime/infer/mh.hpp"
#include "runtime/infer/subsampled_mh.hpp"
#include "runtime/trace/plate.hpp"
#include "runtime/trace/plate_proxy.hpp"
#include "tests/runtime/trace/plate_fixture.hpp"
#include "tests/support/engine_fixture.hpp"

namespace vnt::plate_proxy_tests {
namespace {

constexpr const char* kModel =
    "[assume w (scope_include 'w 0 (multivariate_normal (zeros 3) (id_matrix 3)))]"
    "[assume y_x (lambda (x) (bernoulli (linear_logistic w x)))]";

/// The same model with d features.
std::string model(int d) {
  return fmt::format("[assume w (scope_include 'w 0 (multivariate_normal (zeros {0}) (id_matrix {0})))]"
                     "[assume y_x (lambda (x) (bernoulli (linear_logistic w x)))]",
                     d + 1);
}

/// Rows with d features (the first two informative).
void load_rows(Engine& e, size_t n, uint64_t seed, int d = 2) {
  Rng rng(seed);
  for (size_t i = 0; i < n; ++i) {
    Eigen::VectorXd x(d);
    for (int j = 0; j < d; ++j) x[j] = rng.normal();
    const double p = 1 / (1 + std::exp(-(0.5 + 1.5 * x[0] - (d > 1 ? x[1] : 0.0))));
    e.observe_apply("y_x", {make_vector(x)}, Value(rng.uniform() < p ? 1.0 : 0.0));
  }
}

PlateNode& plate_of(Engine& e) {
  PlateNode* p = plate_test::last_plate(e);
  REQUIRE(p != nullptr);
  return *p;
}

BlockSpec w_all(const char* kernel) { return plate_test::block("w", BlockSpec::Mode::kAll, kernel); }

/// One transition of exact mh on `exact` and of subsampled_mh on `sub`, which must decide alike and end at the
/// same w. Returns the decision.
bool in_lockstep(Engine& exact, const MhOptions& mo, Engine& sub, const SubsampledOptions& so,
                 SubsampledState& state) {
  const bool a = mh_transition(exact.trace(), w_all("mh"), mo);
  REQUIRE(a == subsampled_mh_transition(sub.trace(), w_all("subsampled_mh"), so, state));
  const Eigen::VectorXd& we = *std::get<VectorPtr>(exact.report("w"));
  const Eigen::VectorXd& ws = *std::get<VectorPtr>(sub.report("w"));
  REQUIRE((we - ws).norm() < 1e-12);
  return a;
}

/// Proxies of rows with d features around a reference: their closed-form sum against the sum of the rows' own,
/// and the residuals' size against the l_i's near and far from the reference.
void check_proxies(int d) {
  Engine e(3);
  test::run(e, model(d));
  load_rows(e, 3000, 4, d);  // more than one block of the build
  PlateNode& plate = plate_of(e);
  Rng rng(9);
  Eigen::VectorXd ref = 0.3 * Eigen::VectorXd::Ones(d + 1);
  ref.head(3) << 0.4, 1.2, -0.8;
  std::unique_ptr<LogisticProxy> proxy = LogisticProxy::build(plate, ref);
  REQUIRE(proxy != nullptr);
  CHECK(proxy->rows() == 3000);
  std::vector<uint32_t> rows(plate.rows);
  std::iota(rows.begin(), rows.end(), 0u);
  std::vector<double> r(plate.rows);
  auto normal = [&] {
    Eigen::VectorXd v(d + 1);
    for (Eigen::Index j = 0; j <= d; ++j) v[j] = rng.normal();
    return v;
  };
  for (double step : {1.0, 0.1, 0.01}) {
    CAPTURE(step);
    const Eigen::VectorXd from = ref + step * normal();
    const Eigen::VectorXd to = from + step * normal();
    proxy->residuals(plate, from, to, rows.data(), rows.size(), r.data());
    const Value w_to = make_vector(to), w_from = make_vector(from);
    PlateEvaluator at_to(plate, {&w_to}), at_from(plate, {&w_from});
    double dp_sum = 0, r_abs = 0, l_abs = 0;
    for (size_t i = 0; i < plate.rows; ++i) {
      const double l = at_to.row(i) - at_from.row(i);
      dp_sum += l - r[i];
      r_abs += std::abs(r[i]);
      l_abs += std::abs(l);
    }
    CHECK(proxy->sum(from, to) == doctest::Approx(dp_sum).epsilon(1e-9));
    // Third order in the distance to the reference: the residuals shrink much faster than the l_i.
    if (step == 0.01) CHECK(r_abs < 1e-3 * l_abs);
    if (step == 1.0) CHECK(r_abs > 1e-2 * l_abs);  // far away, the proxy is no longer close
    CHECK(proxy->sum(from, from) == 0.0);
  }
}

TEST_CASE("the proxies' closed-form sum is the sum of the rows' proxies, residuals vanish near the reference") {
  SUBCASE("2 features: the build's sums written out") { check_proxies(2); }
  SUBCASE("7 features: the build's sums by matrix products") { check_proxies(7); }
}

TEST_CASE("a plate that is not a fused logistic one gets no proxies") {
  Engine e(3);
  test::run(e, "[assume w (scope_include 'w 0 (multivariate_normal (zeros 2) (id_matrix 2)))]"
               "[assume f (lambda (x) (normal (linear_logistic w x) 1))]");
  e.observe_apply("f", {make_vector(Eigen::Vector2d(1, 2))}, Value(0.3));
  CHECK(LogisticProxy::build(plate_of(e), Eigen::Vector3d(0, 0, 0)) == nullptr);
}

TEST_CASE("decisions on residuals against proxies with eps = 0 are exactly those of exact mh, stale ones unused") {
  Engine exact(5), sub(5);
  for (Engine* e : {&exact, &sub}) {
    test::run(*e, kModel);
    load_rows(*e, 200, 6);
  }
  SubsampledOptions so{.batch = 30,  // does not divide N: the last mini-batch is partial
                       .epsilon = 0,
                       .drift_sigma = 0.2,
                       .proxies = true};
  SubsampledState state;
  // With eps = 0 every decision reads every row, so subsampled_mh never builds proxies itself (they cannot
  // save a row): the test builds them, away from where the chain goes.
  plate_of(sub).proxy = LogisticProxy::build(plate_of(sub), Eigen::Vector3d(1.0, -0.5, 0.5));
  REQUIRE(plate_of(sub).proxy != nullptr);
  exact.trace().rng().split();  // mirror the stream subsampled_mh splits off for its section order
  MhOptions mo;
  mo.drift_sigma = 0.2;
  mo.allow_partition = false;
  int accepted = 0;
  for (int i = 0; i < 300; ++i) {
    CAPTURE(i);
    if (i == 100) {
      // New rows join the plate: the proxies no longer cover every row and must not be used ...
      load_rows(exact, 50, 7);
      load_rows(sub, 50, 7);
    }
    if (i == 200) {  // ... until they are built again
      const Value w = sub.report("w");
      REQUIRE(plate_of(sub).proxy->rebuild(plate_of(sub), *std::get<VectorPtr>(w)));
    }
    const uint64_t proxied = state.stats.proxy_decisions;
    accepted += in_lockstep(exact, mo, sub, so, state);
    CHECK(state.stats.proxy_decisions - proxied == (i < 100 || i >= 200 ? 1u : 0u));
  }
  CHECK(accepted > 30);
  CHECK(accepted < 270);
  CHECK(state.stats.proxy_builds == 0);
  CHECK(plate_of(sub).proxy->excess == 0.0);
}

TEST_CASE("proxies are built once the rows decisions needed beyond their first look have cost a build") {
  Engine e(8);
  test::run(e, kModel);
  load_rows(e, 2000, 9);
  SubsampledOptions so{.batch = 50,
                       .epsilon = 0.01,
                       .min_batches = 2,  // the first look is at 100 rows
                       .drift_sigma = 0.1,
                       .proxies = true};
  SubsampledState state;
  const double worn = LogisticProxy::build_cost(3) * 2000;
  // None at first: rows are scored without proxies (renting) and counted.
  subsampled_mh_transition(e.trace(), w_all("subsampled_mh"), so, state);
  REQUIRE(plate_of(e).proxy != nullptr);
  CHECK(plate_of(e).proxy->rows() == 0);
  CHECK(state.stats.proxy_builds == 0);
  CHECK(state.stats.proxy_decisions == 0);
  int built_at = -1, rebuilt = 0, quiet = 0, within = 0;  // quiet: transitions whose decision took one look
  for (int i = 0; i < 400; ++i) {
    CAPTURE(i);
    const LogisticProxy& proxy = *plate_of(e).proxy;
    const double before = proxy.excess;
    const Eigen::VectorXd w = *std::get<VectorPtr>(e.report("w"));
    const bool here = proxy.rows() == 2000 && proxy.reference() == w;  // built at the chain's current value
    const uint64_t builds = state.stats.proxy_builds, seen = state.stats.sections_visited,
                   proxied = state.stats.proxy_decisions;
    subsampled_mh_transition(e.trace(), w_all("subsampled_mh"), so, state);
    const uint64_t built = state.stats.proxy_builds - builds;
    // The rule: a decision adds the rows it scored beyond its first look, with proxies or without, unless they
    // are built at the current value (a build would change nothing); a build, at the current value, when the
    // count has reached the cost of one, which starts it again: before the decision, or within it after the
    // mini-batch that reached the cost (the test then starts again).
    const double drawn = static_cast<double>(state.stats.sections_visited - seen);
    if (here) {
      REQUIRE(built == 0);
      CHECK(proxy.excess == before);
    } else if (before >= worn) {
      REQUIRE(built == 1);
      CHECK(proxy.excess == 0);
    } else if (built == 0) {  // the count had not reached the cost before the decision's last mini-batch
      CHECK(before + std::max(0.0, drawn - 150) < worn);
      CHECK(proxy.excess == doctest::Approx(before + std::max(0.0, drawn - 100)));
    } else {
      REQUIRE(built == 1);
      CHECK(before + std::max(0.0, drawn - 100) >= worn);
      ++within;
      CHECK(proxy.excess == 0);
    }
    if (built != 0) CHECK(proxy.reference() == w);
    CHECK(state.stats.proxy_decisions - proxied == (plate_of(e).proxy->rows() == 2000 ? 1u : 0u));
    if (built && built_at < 0) built_at = i;
    rebuilt += static_cast<int>(built);
    quiet += drawn == 100;
  }
  // The chain starts at a draw of the prior; once decisions near the mode have paid for proxies they take one
  // look, so builds stop being needed.
  CHECK(built_at >= 1);
  CHECK(within >= 1);
  CHECK(rebuilt <= 20);
  CHECK(quiet > 200);
}

TEST_CASE("proxies built within a decision: the test goes on over the rows not drawn yet and decides as exact mh") {
  // eps tiny but not 0, so rows are charged and a decision reads nearly every row; before every transition the
  // count is set just below the cost of a build, so each decision that needs more than two mini-batches
  // switches after its second: from no proxies (first half), or from proxies built far from the chain. At
  // n = N the new test decides sum(l_i) >= N mu0 exactly, from the rows it drew and what is known of the
  // others: the same decisions as exact mh. Two observations outside the plate are local sections (p_i = 0).
  Engine exact(5), sub(5);
  PlateNode* plate = nullptr;
  for (Engine* e : {&exact, &sub}) {
    test::run(*e, kModel);
    load_rows(*e, 200, 6);
    plate = &plate_of(*e);
    test::run(*e, "[observe (bernoulli (linear_logistic w (vector 0.3 -1))) 1]"
                  "[observe (bernoulli (linear_logistic w (vector -2 0.5))) 0]");
  }
  SubsampledOptions so{.batch = 30, .epsilon = 1e-15, .drift_sigma = 0.2, .proxies = true};
  SubsampledState state;
  exact.trace().rng().split();  // mirror the stream subsampled_mh splits off for its section order
  MhOptions mo;
  mo.drift_sigma = 0.2;
  mo.allow_partition = false;
  const double worn = LogisticProxy::build_cost(3) * 200;
  int accepted = 0;
  for (int i = 0; i < 300; ++i) {
    CAPTURE(i);
    const Eigen::Vector3d far(1.0, -0.5, 0.5);
    plate->proxy = i < 150 ? std::make_shared<LogisticProxy>() : std::shared_ptr(LogisticProxy::build(*plate, far));
    REQUIRE(plate->proxy != nullptr);
    plate->proxy->excess = worn - 1;
    const uint64_t builds = state.stats.proxy_builds, seen = state.stats.sections_visited;
    accepted += in_lockstep(exact, mo, sub, so, state);
    if (state.stats.sections_visited - seen > 60) CHECK(state.stats.proxy_builds - builds == 1);
  }
  CHECK(accepted > 30);
  CHECK(accepted < 270);
  CHECK(state.stats.proxy_builds > 250);
}

}  // namespace
}  // namespace vnt::plate_proxy_tests
