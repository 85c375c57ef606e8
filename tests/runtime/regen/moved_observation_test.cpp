// The weights of a move that takes an observation from one collapsed procedure to another: the detach scores it
// under the old one, the regen under the new one, each given the other draws. An observation whose chain is held by
// nothing else is scored where its choice is unapplied and applied (no draw made and replaced); one read elsewhere
// too is unconstrained and constrained around them. Both must give the same numbers and restore the same state.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "runtime/regen/infinite_density.hpp"
#include "runtime/regen/regen.hpp"
#include "runtime/scaffold/scaffold.hpp"
#include "tests/support/engine_fixture.hpp"

namespace vnt::moved_observation_tests {
namespace {

struct Weights {
  double rho, xi;
};

/// Moves z to its other value (a forced proposal), scores it, and puts the old state back as a rejection does.
Weights move_z_and_reject(Engine& e) {
  Trace& t = e.trace();
  Node* z = test::assumed_root(e, "z");
  const bool old = std::get<bool>(z->value);
  ProposalKernels kernels;
  kernels[z] = ProposalKernel{ProposalKernel::Kind::kForce, 0, Value(!old)};
  Node* principals[] = {z};
  Scaffold s = build_scaffold(t, principals, std::move(kernels));
  Db rho_db(t);
  const double rho = detach_current(t, s, rho_db);
  const std::optional<double> xi = regen_proposal(t, s, rho_db, "test");
  REQUIRE(xi.has_value());
  CHECK(std::get<bool>(z->value) == !old);
  Db xi_db(t);
  detach_and_extract(t, s, xi_db);
  regen_and_attach(t, s, true, rho_db);
  CHECK(std::get<bool>(z->value) == old);
  return {rho, *xi};
}

// Coin true has drawn two heads, coin false one tail; the moved observation says heads. With beta(1, 1) the
// predictive of heads is (1 + heads) / (2 + draws): 3/4 from coin true, 1/3 from coin false. z's own density,
// log 1/2, is in both weights (a forced proposal scores the value it sets).
void check_weights(const std::string& moved) {
  int started_true = 0;
  for (uint64_t seed : {1, 2, 3, 4, 5, 6}) {
    CAPTURE(seed);
    Engine e(seed);
    test::run(e, "[assume coins (mem (lambda (k) (make_beta_bernoulli 1 1)))] [assume z (flip 0.5)]"
                 "[observe ((coins true)) true] [observe ((coins true)) true] [observe ((coins false)) false]" +
                     moved);
    const bool z = std::get<bool>(test::assumed_root(e, "z")->value);
    started_true += z ? 1 : 0;
    const std::string before = test::fingerprint_of(e);
    const std::vector<Node*> choices = e.trace().random_choices().items();
    const Weights w = move_z_and_reject(e);
    const double from = z ? 3.0 / 4 : 1.0 / 3, to = z ? 1.0 / 3 : 3.0 / 4;
    CHECK(w.rho == doctest::Approx(std::log(0.5) + std::log(from)).epsilon(1e-12));
    CHECK(w.xi == doctest::Approx(std::log(0.5) + std::log(to)).epsilon(1e-12));
    // The rejection put back the coins' counts, the observation's constraint and the choices in their order.
    CHECK(test::fingerprint_of(e) == before);
    CHECK(e.trace().random_choices().items() == choices);
  }
  CHECK((started_true > 0 && started_true < 6));  // both directions met
}

TEST_CASE("an observation whose procedure moves is scored under the old and the new one: its own chain") {
  check_weights("[observe ((coins z)) true]");
  check_weights("[assume y (lambda () ((coins z)))] [observe (y) true]");  // through a compound procedure
  check_weights("[assume x ((coins z))] [observe x true] [predict x]");  // the predict lets go of x first
}

TEST_CASE("an observation whose procedure moves is scored under the old and the new one: a chain read elsewhere") {
  // The detach meets the observation before the predict, which still holds x: unconstrained first.
  check_weights("[assume x ((coins z))] [assume y x] [observe y true] [predict x]");
}

}  // namespace
}  // namespace vnt::moved_observation_tests
