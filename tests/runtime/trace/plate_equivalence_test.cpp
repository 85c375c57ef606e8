// Plates make the moves of one family per row, decision by decision: exact mh and subsampled_mh bitwise for a
// non-fused body, the fused logistic scorer up to rounding; and where the partition must refuse a plate.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "runtime/infer/mh.hpp"
#include "runtime/infer/subsampled_mh.hpp"
#include "tests/runtime/trace/plate_fixture.hpp"

namespace vnt::plate_equivalence_tests {
namespace {

using namespace plate_test;

TEST_CASE("a plate loads like one family per row: same draws from the trace's stream, one node instead of N") {
  Pair p(7);
  p.run(kLinear);
  const size_t before = p.on.trace().live_nodes();
  load_linear(p.on, 300, 1);
  load_linear(p.off, 300, 1);
  REQUIRE(last_plate(p.on) != nullptr);
  CHECK(last_plate(p.off) == nullptr);
  CHECK(last_plate(p.on)->rows == 300);
  CHECK(p.on.directives().size() == 3);
  CHECK(p.off.directives().size() == 302);
  CHECK(p.on.trace().live_nodes() == before + 1);
  CHECK(p.off.trace().live_nodes() > before + 300 * 5);
  CHECK(p.on.trace().rng().uniform() == p.off.trace().rng().uniform());
}

TEST_CASE("exact mh makes bitwise the same moves on a plate as on one family per row") {
  // Non-fused body: each row's log density comes from the same SP calls in both representations, and every
  // proposal is the same draw from the same stream, so a is bitwise equal as long as the decisions agree. The sums
  // may be associated differently (a plate's total is one term of the general scaffold's weight, and exact mh does
  // not partition a border whose sections are all plate rows, while one family per row is partitioned unless
  // allow_partition is off): a decision could then differ only if log u fell within ~1e-13 of the log acceptance
  // ratio, a chance of ~1e-13 per move, and with these seeds none does.
  for (bool partition : {true, false}) {
    CAPTURE(partition);
    Pair p(11);
    p.run(kLinear);
    load_linear(p.on, 300, 2);
    load_linear(p.off, 300, 2);
    REQUIRE(last_plate(p.on) != nullptr);
    MhOptions mo;
    mo.drift_sigma = 0.03;  // the posterior sd of a is about 0.03
    mo.allow_partition = partition;
    const BlockSpec spec = block("a", BlockSpec::Mode::kAll);
    int accepted = 0;
    for (int i = 0; i < 200; ++i) {
      const bool x = mh_transition(p.on.trace(), spec, mo);
      const bool y = mh_transition(p.off.trace(), spec, mo);
      REQUIRE(x == y);
      REQUIRE(number(p.on, "a") == number(p.off, "a"));
      accepted += x ? 1 : 0;
    }
    CHECK(accepted > 20);
    CHECK(accepted < 180);
    CHECK(p.on.trace().rng().uniform() == p.off.trace().rng().uniform());
  }
}

TEST_CASE("subsampled_mh makes bitwise the same moves on a plate as on one family per row") {
  // Row i is section i of a's border either way (plates come first among its children; one family per row adds
  // a's children in row order, and their sections are evaluated from values alone, so never re-linked), so the
  // same draws pick the same rows, whose l_i come from the same SP calls and are summed in the same order.
  Pair p(13);
  p.run(kLinear);
  load_linear(p.on, 300, 3);
  load_linear(p.off, 300, 3);
  SubsampledOptions so{.batch = 20, .epsilon = 0.05, .drift_sigma = 0.03};
  SubsampledState s_on, s_off;
  const BlockSpec spec = block("a", BlockSpec::Mode::kAll, "subsampled_mh");
  for (int i = 0; i < 200; ++i) {
    const bool x = subsampled_mh_transition(p.on.trace(), spec, so, s_on);
    const bool y = subsampled_mh_transition(p.off.trace(), spec, so, s_off);
    REQUIRE(x == y);
    REQUIRE(number(p.on, "a") == number(p.off, "a"));
  }
  CHECK(s_on.stats.accepted == s_off.stats.accepted);
  CHECK(s_on.stats.accepted > 20);
  CHECK(s_on.stats.exact_transitions == 0);
  CHECK(s_on.stats.sections_visited == s_off.stats.sections_visited);  // the same rows, in the same order
  CHECK(s_on.stats.sections_visited < s_on.stats.sections_total);      // and it did subsample
}

/// 200 transitions of `kernel` on w (drift sigma) with plates and without, from the same stream: how many
/// decisions differed, and how many moves the plate's chain accepted. A flipped decision decouples the chains
/// for good (they propose from different states afterwards), so w is compared only while every decision so far
/// agreed, and must then be bitwise equal: the proposals are the same draws from the same stream.
std::pair<int, int> lockstep(Pair& p, const char* kernel, double sigma) {
  MhOptions mo;
  mo.drift_sigma = sigma;
  SubsampledOptions so{.batch = 20, .epsilon = 0.05, .drift_sigma = sigma};
  SubsampledState s_on, s_off;
  const BlockSpec spec = block("w", BlockSpec::Mode::kAll, kernel);
  const bool sub = std::string(kernel) == "subsampled_mh";
  auto step = [&](Engine& e, SubsampledState& state) {
    return sub ? subsampled_mh_transition(e.trace(), spec, so, state) : mh_transition(e.trace(), spec, mo);
  };
  int mismatches = 0, accepted = 0;
  for (int i = 0; i < 200; ++i) {
    const bool x = step(p.on, s_on), y = step(p.off, s_off);
    mismatches += x != y ? 1 : 0;
    accepted += x ? 1 : 0;
    if (mismatches == 0) CHECK((vec(p.on, "w") - vec(p.off, "w")).norm() == 0);
  }
  return {mismatches, accepted};
}

TEST_CASE("the fused logistic scorer makes the decisions of the general path up to rounding") {
  // The fused scorer computes log p(y | w) as -softplus(-+z), the general path as log(logistic(z)) or
  // log1p(-logistic(z)): they differ by rounding only. The worst case is log1p(-p) near |z| = 8 (the largest
  // linear predictor here): 1 - p = 3e-4 inherits p's rounding error of 1e-16, an absolute error of 4e-13 in the
  // log, so each of the two sums over 300 rows (before and after a proposal) is off by < 1.2e-10. A decision can
  // differ only if log u lands within 2.4e-10 of the log acceptance ratio (for subsampled_mh, if a mean of the
  // l_i lands that close to the test's threshold): log u has density at most 1, so the chance is < 2.4e-10 per
  // move and < 5e-8 over the run, and the bound below (2 of 200) is loose (see lockstep for what is compared).
  for (const char* kernel : {"mh", "subsampled_mh"}) {
    CAPTURE(std::string(kernel));
    Pair p(17);
    p.run(kLogistic);
    load_logistic(p.on, 300, 4);
    load_logistic(p.off, 300, 4);
    REQUIRE(last_plate(p.on) != nullptr);
    CHECK(last_plate(p.on)->program->fused == PlateProgram::Fused::kLogistic);
    CHECK(last_plate(p.off) == nullptr);
    auto [mismatches, accepted] = lockstep(p, kernel, 0.08);
    CHECK(mismatches <= 2);
    CHECK(accepted > 20);
    CHECK(accepted < 180);
    // Close at the end: which, as a flip decouples the chains, also asks for no flip at all (chance < 5e-8).
    CHECK((vec(p.on, "w") - vec(p.off, "w")).norm() < 1e-9);
  }
}

TEST_CASE("in the tails trace nodes score like the fused plate: rows the logistic rounds to certain load and move alike") {
  // Features of sd 40 put most linear predictors beyond |z| = 37, where logistic(z) rounds to 0 or 1, and a
  // tenth of the labels are flipped: rows the rounded probability calls impossible. The fused plate scores
  // them as -softplus(-+z); trace nodes score them the same through Args::log_odds (without it the load fails
  // with "probability zero"). Elsewhere the two differ by rounding only (see the test above; here 1 - p >= 1e-6
  // before the log-odds take over, so a row's error is < 2e-10), and the chains are compared as there.
  for (const char* kernel : {"mh", "subsampled_mh"}) {
    CAPTURE(std::string(kernel));
    Pair p(23);
    p.run(kLogistic);
    for (Engine* e : {&p.on, &p.off}) {
      Rng rng(9);
      for (int i = 0; i < 200; ++i) {
        const double x1 = 40 * rng.normal(), x2 = 40 * rng.normal();
        double y = 0.5 + 1.5 * x1 - x2 > 0 ? 1.0 : 0.0;
        if (rng.uniform() < 0.1) y = 1 - y;
        e->observe_apply("y_x", {vec2(x1, x2)}, Value(y));
      }
    }
    REQUIRE(last_plate(p.on) != nullptr);
    CHECK(last_plate(p.off) == nullptr);
    auto [mismatches, accepted] = lockstep(p, kernel, 0.01);
    CHECK(mismatches == 0);
    CHECK(accepted > 20);
    CHECK(accepted < 180);
  }
}

// b = 2a is computed in a local section of a's border (the lookup of a in b's family), and the plate reads a and
// b. With one family per row every row meets b's section, so the sections do not split (the partition refuses);
// the plate's rows meet it too and must be refused as well (or scored with a and b both proposed).
const char* kBorderAndChild =
    "[assume a (scope_include 'a 0 (normal 0 1))] [assume b (* 2 a)]"
    "[assume f (lambda (x) (normal (+ a (* b x)) 0.5))]";

TEST_CASE("a plate that reads the border and a value computed from it: the general scaffold as without plates") {
  Pair p(59);
  p.run(kBorderAndChild);
  load_linear(p.on, 50, 8);
  load_linear(p.off, 50, 8);
  REQUIRE(last_plate(p.on) != nullptr);
  CHECK(last_plate(p.on)->inputs.size() == 2);
  Engine refused(59);  // a separate engine: subsampled_mh splits a stream off the trace's before it refuses
  refused.set_plates(false);
  test::run(refused, kBorderAndChild);
  load_linear(refused, 50, 8);
  SubsampledOptions so;
  SubsampledState state;
  try {
    subsampled_mh_transition(refused.trace(), block("a", BlockSpec::Mode::kAll, "subsampled_mh"), so, state);
    FAIL("expected an error");
  } catch (const Error& err) {
    CHECK(err.kind() == ErrorKind::kInference);
    CHECK(err.message().find("its local sections meet in too many places") != std::string::npos);
  }
  MhOptions mo;
  mo.drift_sigma = 0.05;
  mo.allow_partition = false;
  const BlockSpec spec = block("a", BlockSpec::Mode::kAll);
  for (int i = 0; i < 300; ++i) {
    REQUIRE(mh_transition(p.on.trace(), spec, mo) == mh_transition(p.off.trace(), spec, mo));
    REQUIRE(number(p.on, "a") == number(p.off, "a"));
  }
}

// b = 2a is a local section of its own; the plate reads a and b, so every row would meet it. The partition must
// refuse before it draws anything: exact mh then takes the general scaffold, decision by decision as without the
// partition (before the fix: a posterior mean of a of 0.206 against 0.2536 analytically over 40 000 moves).
TEST_CASE("a plate that reads the border and a value computed from it is refused by the partition") {
  Engine part(59), general(59);
  test::run(part, kBorderAndChild);
  test::run(general, kBorderAndChild);
  load_linear(part, 50, 8);
  load_linear(general, 50, 8);
  SubsampledOptions so{.batch = 10, .epsilon = 0.05, .drift_sigma = 0.05};
  SubsampledState state;
  Engine sub(59);
  test::run(sub, kBorderAndChild);
  load_linear(sub, 50, 8);
  CHECK_THROWS_AS(subsampled_mh_transition(sub.trace(), block("a", BlockSpec::Mode::kAll, "subsampled_mh"), so, state),
                  Error);
  MhOptions partitioned, scaffold;
  partitioned.drift_sigma = scaffold.drift_sigma = 0.05;
  scaffold.allow_partition = false;
  const BlockSpec spec = block("a", BlockSpec::Mode::kAll);
  for (int i = 0; i < 300; ++i) {
    CAPTURE(i);
    REQUIRE(mh_transition(part.trace(), spec, partitioned) == mh_transition(general.trace(), spec, scaffold));
    REQUIRE(number(part, "a") == number(general, "a"));
  }
}

}  // namespace
}  // namespace vnt::plate_equivalence_tests
