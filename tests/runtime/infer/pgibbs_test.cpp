// Particle Gibbs on the trace: consistent after many moves with brush and with subsampled_mh on a parameter, states of
// probability zero never taken, errors leave the trace and its stream as they were, the same seed the same moves.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <string>

#include "runtime/core/error.hpp"
#include "runtime/infer/pgibbs.hpp"
#include "runtime/regen/refresh.hpp"
#include "tests/support/engine_fixture.hpp"

namespace vnt::pgibbs_tests {
namespace {

// A hidden Markov model whose transition reads the state before through an `if`: brush without random choices.
const std::string kHmm = R"(
[assume s (mem (lambda (t) (scope_include 's t (if (= t 0) (flip 0.5) (flip (if (s (- t 1)) 0.9 0.2))))))]
[observe (normal (if (s 0) 1 -1) 1) 0.4]
[observe (normal (if (s 1) 1 -1) 1) -1.1]
[observe (normal (if (s 2) 1 -1) 1) 0.8]
[observe (normal (if (s 3) 1 -1) 1) 1.5]
[observe (normal (if (s 4) 1 -1) 1) -0.2]
)";

void expect_error(Engine& e, const std::string& infer, const std::string& says) {
  const std::string before = test::fingerprint_of(e);
  const Rng stream = e.trace().rng();
  try {
    test::run(e, infer);
    FAIL("expected an error");
  } catch (const Error& err) {
    CHECK(err.kind() == ErrorKind::kInference);
    CHECK_MESSAGE(std::string(err.what()).find(says) != std::string::npos, err.what());
  }
  CHECK(test::fingerprint_of(e) == before);
  Rng now = e.trace().rng(), then = stream;  // the same stream: the same next draws
  CHECK(now.uniform() == then.uniform());
}

}  // namespace

TEST_CASE("many pgibbs moves with brush leave every deterministic node consistent, and the report counts them") {
  Engine e(5);
  test::run(e, kHmm + "[infer (repeat 200 (pgibbs s ordered 4 1))]\n[infer (pgibbs s (ordered_range 1 3) 4 50)]");
  CHECK(test::inconsistent_nodes(e) == 0);
  const KernelRecord& whole = e.kernel_reports()[e.kernel_reports().size() - 2];
  CHECK(whole.kernel == "pgibbs");
  CHECK(whole.block == "ordered");
  CHECK(whole.transitions == 200);
  CHECK((whole.accepted > 20 && whole.accepted < 200));  // a new particle's path is picked, not every time
  CHECK(e.kernel_reports().back().block == "(ordered_range 1 3)");
}

TEST_CASE("pgibbs samples ancestors on chains of order one without branches, and only there") {
  auto samples = [](const std::string& model, const std::string& scope, BlockSpec::Mode mode) {
    Engine e(1);
    test::run(e, model);
    BlockSpec spec;
    spec.scope = scope;
    spec.mode = mode;
    spec.kernel = "pgibbs";
    return pgibbs_samples_ancestors(e.trace(), spec);
  };
  const std::string order_one = R"(
[assume x (mem (lambda (t) (scope_include 'x t (if (= t 0) (normal 0 1) (normal (x (- t 1)) 0.5)))))]
[observe (normal (x 0) 1) 0.3]
[observe (normal (x 1) 1) -0.4]
[observe (normal (+ (x 1) (x 2)) 1) 0.9]
)";
  CHECK(samples(order_one, "x", BlockSpec::Mode::kOrdered));
  CHECK_FALSE(samples(order_one, "x", BlockSpec::Mode::kAll));  // one group: no ancestor to draw
  // An observation of x_0 and x_2 together: the density of the retained x_2 depends on x_0 beyond group 1's weight.
  CHECK_FALSE(samples(order_one + "[observe (normal (+ (x 0) (x 2)) 1) 0.2]", "x", BlockSpec::Mode::kOrdered));
  // A deterministic value read from x_0 and computed in group 2: the retained path's would go stale.
  CHECK_FALSE(samples(order_one + "[assume d (+ (x 0) (x 2))]", "x", BlockSpec::Mode::kOrdered));
  // A branch the states decide whose branches are pure: a forced regeneration makes the same brush again.
  CHECK(samples(kHmm, "s", BlockSpec::Mode::kOrdered));
  // With a let binding the state before, a branch reading it is pure; not so with a random choice in a branch (drawn
  // anew), a compound procedure called there (not followed), or a branch reading a value computed from the state
  // two before (through the brush: order two).
  auto chain = [](const std::string& bindings, const std::string& mean) {
    return "[assume f (lambda (v) (* 2 v))]\n"
           "[assume x (mem (lambda (t) (scope_include 'x t (if (= t 0) (normal 0 1) (let (" + bindings + ") (normal " +
           mean + " 0.5))))))]\n[observe (normal (x 0) 1) 0.3]\n[observe (normal (x 1) 1) -0.4]\n"
           "[observe (normal (x 2) 1) 0.9]\n";
  };
  const std::string p = "(p (x (- t 1)))";
  CHECK(samples(chain(p, "(if (> p 0) (* 2 p) 0)"), "x", BlockSpec::Mode::kOrdered));
  CHECK_FALSE(samples(chain(p, "(if (> p 0) (normal p 1) 0)"), "x", BlockSpec::Mode::kOrdered));
  CHECK_FALSE(samples(chain(p, "(if (> p 0) (f p) 0)"), "x", BlockSpec::Mode::kOrdered));
  CHECK_FALSE(samples(chain(p + " (q (if (> t 1) (x (- t 2)) 0))", "(if (> p 0) q 0)"), "x", BlockSpec::Mode::kOrdered));
  // q read by nothing: it is regenerated with the state it reads, two groups before, and changes nothing after.
  CHECK(samples(chain(p + " (q (if (> t 1) (x (- t 2)) 0))", "(if (> p 0) p 0)"), "x", BlockSpec::Mode::kOrdered));
  // Draws of a collapsed coin or a CRP: each one's density reads the counts of all the others (tests/stat/pgibbs_test
  // has the coin's posterior, 6 standard errors off when ancestors were drawn here).
  auto draws = [](const std::string& draw, const std::string& holds) {
    std::string text = "[assume x (mem (lambda (t) (scope_include 'x t " + draw + ")))]\n";
    for (int t = 0; t < 3; ++t)  // holds: what state t being 0 or true reads, with {} for t
      text += "[observe (normal (if " + fmt::format(fmt::runtime(holds), t) + " 1 -1) 1) 0.3]\n";
    return text;
  };
  CHECK(samples(draws("(flip 0.5)", "(x {})"), "x", BlockSpec::Mode::kOrdered));
  CHECK_FALSE(samples("[assume coin (make_beta_bernoulli 1 1)]\n" + draws("(coin)", "(x {})"), "x",
                      BlockSpec::Mode::kOrdered));
  CHECK(samples(draws("(categorical (vector 0.5 0.5))", "(= (x {}) 0)"), "x", BlockSpec::Mode::kOrdered));
  CHECK_FALSE(samples("[assume crp (make_crp 1)]\n" + draws("(crp)", "(= (x {}) 0)"), "x", BlockSpec::Mode::kOrdered));
}

TEST_CASE("the same seed makes the same pgibbs moves") {
  auto run = [](uint64_t seed) {
    Engine e(seed);
    test::run(e, R"(
[assume x (mem (lambda (t) (scope_include 'x t (if (= t 0) (normal 0 1) (normal (x (- t 1)) 0.5)))))]
[observe (normal (x 0) 1) 0.3]
[observe (normal (x 1) 1) -0.4]
[observe (normal (x 2) 1) 0.9]
[infer (pgibbs x ordered 6 30)]
)");
    return test::fingerprint_of(e);
  };
  CHECK(run(9) == run(9));
  CHECK(run(9) != run(10));
}

TEST_CASE("pgibbs cycled with subsampled_mh on the parameter of a state-space model keeps every node consistent") {
  Engine e(7);
  std::string program = R"(
[assume phi (scope_include 'phi 0 (beta 5 1))]
[assume phi_of (mem (lambda (i) phi))]
[assume h (mem (lambda (i t) (scope_include 'h t (if (= t 0) 0 (normal (* (phi_of i) (h i (- t 1))) 0.3)))))]
)";
  for (int i = 0; i < 30; ++i)
    for (int t = 1; t <= 3; ++t) program += fmt::format("[observe (normal (h {} {}) 0.5) {}]\n", i, t, 0.1 * ((i * 7 + t * 3) % 11) - 0.5);
  test::run(e, program + "[infer (repeat 40 (do (pgibbs h ordered 4 1) (subsampled_mh phi 0 10 0.1 'drift 0.05 2)))]");
  // subsampled_mh leaves the sections it did not visit stale, to be repaired when read (as pgibbs's scaffold does).
  refresh_all(e.trace());
  CHECK(test::inconsistent_nodes(e) == 0);
  CHECK(e.kernel_reports()[0].transitions == 40);
}

TEST_CASE("random choices outside the scope in a branch its choices decide are part of each particle") {
  // c is brush of a: each particle draws its own, the retained one keeps the current one (as gibbs does).
  Engine e(4);
  test::run(e, "[assume a (scope_include 'h 0 (flip 0.5))]\n[assume c (if a (normal 0 1) (normal 5 1))]\n"
               "[observe (normal c 1) 4.2]\n[infer (repeat 100 (do (pgibbs h ordered 5 1) (mh default one 1)))]");
  CHECK(test::inconsistent_nodes(e) == 0);
  CHECK(e.kernel_reports()[0].accepted > 0);
}

TEST_CASE("a pgibbs particle whose state has probability zero (an invalid parameter) is never picked") {
  size_t met = 0;
  for (uint64_t seed = 1; seed < 12; ++seed) {
    Engine e(seed);
    test::run(e, "[assume a (scope_include 'h 0 (flip 0.5))]");
    if (!std::get<bool>(e.sample(test::expression(e, "a")))) continue;  // the observation would be refused
    ++met;
    // Half the particles draw a false, under which the observation's sd is -1.
    test::run(e, "[observe (normal 0 (if a 1 -1)) 0.3]\n[infer (pgibbs h ordered 5 30)]");
    CHECK(std::get<bool>(e.sample(test::expression(e, "a"))));
    CHECK(test::inconsistent_nodes(e) == 0);
  }
  CHECK(met >= 3);
}

TEST_CASE("pgibbs refusals and failures leave the trace and its stream as they were") {
  SUBCASE("a particle that makes a random choice of the scope the current state does not") {
    // In the default scope every random choice is one of the scope: seen as the particle makes it. In a user scope,
    // a choice in the extent of one of its tags: seen when the move would take it (the observation favours it).
    for (const std::string scope : {"default all", "h ordered"}) {
      bool met = false;
      for (uint64_t seed = 1; seed < 30 && !met; ++seed) {
        Engine e(seed);
        test::run(e, "[assume a (scope_include 'h 0 (flip 0.5))]\n[assume b (scope_include 'h 1 (if a (normal 0 1) 0))]");
        if (std::get<bool>(e.sample(test::expression(e, "a")))) continue;  // with a true, refused before any move
        met = true;
        test::run(e, "[observe (normal (if a 3 0) 0.3) 3]");
        expect_error(e, "[infer (pgibbs " + scope + " 10 1)]", "makes random choices in the scope that the current");
      }
      CHECK(met);
    }
  }
  SUBCASE("a current state whose choice exists only for some values of another, refused before any move") {
    Engine e(2);
    test::run(e, "[assume a (scope_include 'h 0 (flip 0.999))]\n[assume b (if a (normal 0 1) 0)]");
    expect_error(e, "[infer (pgibbs default all 5 1)]", "exists only for some values of other choices");
  }
  SUBCASE("a particle giving an observation an infinite density") {
    bool met = false;
    for (uint64_t seed = 1; seed < 30 && !met; ++seed) {
      Engine e(seed);
      test::run(e, "[assume x (scope_include 'h 0 (normal 0 1))]\n[assume a (scope_include 'h 1 (flip 0.5))]\n"
                   "[observe (normal x 1) 0.3]");
      if (std::get<bool>(e.sample(test::expression(e, "a")))) continue;
      met = true;
      test::run(e, "[observe (beta (if a 0.5 1) 1) 0]");
      expect_error(e, "[infer (pgibbs h ordered 10 1)]", "pgibbs: the proposal gives (beta (if a 0.5 1) 1) an infinite");
    }
    CHECK(met);
  }
}

}  // namespace vnt::pgibbs_tests
