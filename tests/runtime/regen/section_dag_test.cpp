// SectionDag: a section evaluated in place gives the values and the log density the trace's own walks give.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "runtime/regen/border_reach.hpp"
#include "runtime/regen/section_dag.hpp"
#include "tests/support/engine_fixture.hpp"

namespace vnt::section_dag_tests {
namespace {

// Each datum reads w twice, and the reads meet at `vector`: a section of primitive applications, evaluated in
// place. w·x is about 350 for the first datum, so its probability rounds to exactly 1 and its observed `false`
// has density zero by the value alone; the bernoulli asks the application that computed it for the log-odds
// (Args::log_odds), -softplus(350) ~ -350. SectionDag reads the operands through pointers it found once, so its
// Args must still say where each operand came from.
const std::string kProgram =
    "[assume w (multivariate_normal (vector 5 5) (* 0.01 (id_matrix 2)))]"
    "[assume f (lambda (x) (bernoulli (linear_logistic (vector (lookup w 0) (lookup w 1)) x)))]"
    "[observe (f (vector 30 40)) false]"
    "[observe (f (vector 1 2)) true]";

double first_datum_log_density(const Eigen::VectorXd& w) { return -(30 * w[0] + 40 * w[1]); }

TEST_CASE("a section evaluated in place scores from the log-odds of the applications it evaluated") {
  Engine e(2);
  test::run(e, kProgram);
  Node* border = e.trace().global("w");
  REQUIRE(border->children.size() == 4);  // two reads per datum
  BorderReach reach(border);
  const SectionDag dag(e.trace(), reach, border->children[0]);
  REQUIRE(dag.evaluable());
  CHECK(dag.roots().size() == 2);
  const Eigen::VectorXd w = *std::get<VectorPtr>(border->value);
  REQUIRE(w.minCoeff() > 4);
  CHECK(dag.log_density() == doctest::Approx(first_datum_log_density(w)));

  // Under another value of the border, then back: the values of the trace's walks, and exactly the old ones.
  const std::string before = test::fingerprint_of(e);
  Value other = make_vector(Eigen::Vector2d(4, 3));
  std::vector<Value> saved;
  dag.save(saved);
  std::swap(border->value, other);
  dag.evaluate();
  CHECK(dag.log_density() == doctest::Approx(first_datum_log_density(Eigen::Vector2d(4, 3))));
  std::swap(border->value, other);
  dag.restore(saved.begin());
  CHECK(test::fingerprint_of(e) == before);
  CHECK(dag.log_density() == doctest::Approx(first_datum_log_density(w)));
}

}  // namespace
}  // namespace vnt::section_dag_tests
