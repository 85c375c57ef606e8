// A border whose local sections are both plate rows and trace nodes: section numbering, exactness at eps = 0,
// stale bookkeeping (only node sections can be stale) and the plate's cached total.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <fmt/format.h>

#include "runtime/infer/mh.hpp"
#include "runtime/infer/subsampled_mh.hpp"
#include "runtime/regen/refresh.hpp"
#include "runtime/trace/plate.hpp"
#include "tests/support/block_spec.hpp"
#include "tests/support/engine_fixture.hpp"

namespace vnt::plate_sections_tests {
namespace {

/// Bayesian logistic regression with `nodes` observations written as directives (one family each) and `rows`
/// loaded through observe_apply (one plate).
void load(Engine& e, int nodes, int rows, uint64_t seed) {
  Rng rng(seed);
  std::string p =
      "[assume w (scope_include 'w 0 (multivariate_normal (vector 0 0 0) (id_matrix 3)))]"
      "[assume y_x (lambda (x) (bernoulli (linear_logistic w x)))]";
  auto datum = [&](double* x0, double* x1) {
    *x0 = rng.normal();
    *x1 = rng.normal();
    return rng.uniform() < 1 / (1 + std::exp(-(0.5 + 1.5 * *x0 - *x1))) ? 1.0 : 0.0;
  };
  for (int i = 0; i < nodes; ++i) {
    double x0, x1;
    double y = datum(&x0, &x1);
    p += fmt::format("[observe (y_x (vector {} {})) {}]", x0, x1, y);
  }
  test::run(e, p);
  for (int i = 0; i < rows; ++i) {
    double x0, x1;
    double y = datum(&x0, &x1);
    Eigen::VectorXd x(2);
    x << x0, x1;
    e.observe_apply("y_x", {make_vector(x)}, y);
  }
}

BlockSpec w_all() { return test::block("w", BlockSpec::Mode::kAll, "subsampled_mh"); }

Eigen::VectorXd w_of(Engine& e) { return *std::get<VectorPtr>(e.report("w")); }

PlateNode* the_plate(Engine& e) {
  Node* root = e.directives().back().root;
  REQUIRE(root->kind == NodeKind::kPlate);
  return as_plate(root);
}

TEST_CASE("plate rows and node sections under one border: N counts both, and eps = 0 is exact mh") {
  Engine exact(5), sub(5);
  load(exact, 30, 120, 4);
  load(sub, 30, 120, 4);
  CHECK(the_plate(sub)->rows == 120);
  BorderInfo b = find_border(select_block(sub.trace(), w_all()).principals.at(0));
  REQUIRE(b.border != nullptr);
  CHECK(b.n == 150);
  CHECK(b.border->plate_children == 1);
  SubsampledOptions so{.batch = 7, .epsilon = 0, .drift_sigma = 0.3};
  SubsampledState state;
  exact.trace().rng().split();  // mirror the draw subsampled_mh splits off for its section order
  MhOptions mo;
  mo.drift_sigma = 0.3;
  mo.allow_partition = false;  // the general scaffold: the plate absorbs as one node
  int accepted = 0;
  for (int i = 0; i < 150; ++i) {
    bool a = mh_transition(exact.trace(), w_all(), mo);
    bool s = subsampled_mh_transition(sub.trace(), w_all(), so, state);
    REQUIRE(a == s);  // sums in another order differ by rounding only; no decision here is that close
    accepted += a;
    CHECK((w_of(exact) - w_of(sub)).norm() == 0);
  }
  CHECK(accepted > 10);
  CHECK(accepted < 140);
  CHECK(state.stats.sections_visited == 150u * 150u);
}

TEST_CASE("only node sections go stale, the plate's cached total is dropped, then recomputed correctly") {
  Engine e(9);
  load(e, 40, 200, 6);
  PlateNode* plate = the_plate(e);
  SubsampledOptions so{.batch = 5, .epsilon = 0.2, .drift_sigma = 0.5};
  SubsampledState state;
  for (int i = 0; i < 300; ++i) subsampled_mh_transition(e.trace(), w_all(), so, state);
  CHECK(state.stats.accepted > 0);
  CHECK(state.stats.sections_visited < state.stats.sections_total);
  Node* border = find_border(select_block(e.trace(), w_all()).principals.at(0)).border;
  REQUIRE(border != nullptr);
  auto it = e.trace().stale_borders().find(border);
  REQUIRE(it != e.trace().stale_borders().end());
  CHECK(it->second <= 40u);  // at most every node section; plate rows are never counted
  CHECK(test::inconsistent_nodes(e) > 0);
  refresh_all(e.trace());
  CHECK(test::inconsistent_nodes(e) == 0);

  // Whatever the last move left in the cache, the total must be the rows' sum at the current w.
  const double fresh = PlateEvaluator(*plate, current_inputs(*plate)).sum();
  CHECK(plate_total(*plate) == doctest::Approx(fresh).epsilon(1e-12));
  // Exact mh through the general path keeps it valid and right.
  MhOptions mo;
  mo.drift_sigma = 0.2;
  for (int i = 0; i < 30; ++i) mh_transition(e.trace(), w_all(), mo);
  CHECK(plate->total_valid);
  CHECK(plate->total == doctest::Approx(PlateEvaluator(*plate, current_inputs(*plate)).sum()).epsilon(1e-12));
  CHECK(e.trace().stale_borders().empty());
}

TEST_CASE("after moves that scored every row, the plate's total as read is exact") {
  Engine e(3);
  load(e, 0, 80, 2);
  PlateNode* plate = the_plate(e);
  SubsampledOptions so{.batch = 10,
                       .epsilon = 0,  // every row is scored
                       .drift_sigma = 0.2};
  SubsampledState state;
  int accepted = 0;
  for (int i = 0; i < 40; ++i) {
    accepted += subsampled_mh_transition(e.trace(), w_all(), so, state);
    // Rows scored by their change leave the total to be recomputed when read (by exact mh's general path).
    CHECK(plate_total(*plate) == doctest::Approx(PlateEvaluator(*plate, current_inputs(*plate)).sum()).epsilon(1e-12));
    CHECK(plate->total_valid);
  }
  CHECK(accepted > 0);
}

}  // namespace
}  // namespace vnt::plate_sections_tests
