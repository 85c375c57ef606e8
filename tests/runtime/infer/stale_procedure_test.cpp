// Repairs that change the shape of a section: a local section of one border applies a procedure that a stale
// section of another border computes, which a repair in the middle of a transition may change; and a stale section
// with an `if` on the parameter, which the approximate move never visited, takes its other branch when repaired.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "runtime/infer/subsampled_mh.hpp"
#include "runtime/regen/refresh.hpp"
#include "tests/support/block_spec.hpp"
#include "tests/support/engine_fixture.hpp"
#include "tests/support/stale_brush.hpp"

namespace vnt::stale_procedure_tests {
namespace {

constexpr int kN = 40;

double x_of(int i) { return 1.0 + 0.01 * i; }

// a_i = (op_i w x_i), with op_i chosen by z: * while z < x_i, normal (mean w, sd x_i) once z is past it. Each a_i
// is read by an observation, so w's sections are a_i and its observation, and z's are op_i and a_i. `observe` is
// how a_i is observed: the sections of w are evaluated in place, or (through a compound procedure) take the
// general path.
std::string program(const std::string& observe) {
  std::string p =
      "[assume z (scope_include 'z 0 (normal 0 3))]"
      "[assume w (scope_include 'w 0 (normal 0 1))]"
      "[assume ops (list * normal)]"
      "[assume pick (lambda (x) (lookup ops (round (logistic (* 100 (- z x))))))]";
  for (int i = 0; i < kN; ++i)
    p += fmt::format("[assume x{0} {1}] [assume a{0} ((pick x{0}) w x{0})] [observe {2} 0.5]", i, x_of(i),
                     fmt::format(fmt::runtime(observe), fmt::format("a{}", i)));
  return p;
}

double number(Engine& e, const std::string& name) { return std::get<double>(e.trace().global(name)->value); }

TEST_CASE("a section whose procedure a repair turns random is found again before it is scored") {
  // w's sections are first found (and cached) while every op_i is *: a_i is a deterministic node there. An
  // approximate move of z past every x_i then leaves most of z's sections stale, so op_i is still * in them. A
  // w transition that repairs them makes a_i a random choice, which absorbs w's change and keeps its value. Scored
  // with the shape found before, a_i would be recomputed as if normal were deterministic (from a fixed stream):
  // a_i = w + x_i * g for one g in every section the move visited.
  for (const std::string observe : {"(normal {} 1)", "((lambda (v) (normal v 1)) {})"}) {
  CAPTURE(observe);
  Engine e(4);
  test::run(e, program(observe));
  SubsampledOptions so{.batch = 2,
                       .epsilon = 0.3,
                       .drift_sigma = 0.01};  // small steps: most w moves are accepted
  SubsampledState sw, sz;
  const BlockSpec spec_w = test::block("w", BlockSpec::Mode::kOne, "subsampled_mh");
  for (int t = 0; t < 5; ++t) subsampled_mh_transition(e.trace(), spec_w, so, sw);
  SubsampledOptions far = so;
  far.drift_sigma = 6;
  const BlockSpec spec_z = test::block("z", BlockSpec::Mode::kOne, "subsampled_mh");
  bool past = false;
  for (int t = 0; t < 200 && !past; ++t) {
    const double before = number(e, "z");
    subsampled_mh_transition(e.trace(), spec_z, far, sz);
    past = before < x_of(0) && number(e, "z") > x_of(kN - 1);
  }
  REQUIRE(past);
  REQUIRE(e.trace().stale_borders().size() == 1);
  // eps 0: every section is visited (and repaired), and the move decided exactly.
  so.epsilon = 0;
  so.batch = kN;
  bool accepted = false;
  for (int t = 0; t < 20 && !accepted; ++t) accepted = subsampled_mh_transition(e.trace(), spec_w, so, sw);
  REQUIRE(accepted);
  std::vector<double> g;
  for (int i = 0; i < kN; ++i) g.push_back((number(e, fmt::format("a{}", i)) - number(e, "w")) / x_of(i));
  double mean = 0, var = 0;
  for (double v : g) mean += v / kN;
  for (double v : g) var += (v - mean) * (v - mean) / (kN - 1);
  CHECK(std::sqrt(var) > 0.3);  // independent draws of normal(w, x_i): about 1
  refresh_all(e.trace());
  CHECK(test::inconsistent_nodes(e) == 0);
  }
}

// One datum in the middle branches on w, with a latent choice in the branch taken while w < 0. An approximate move
// across 0 that does not visit it leaves it stale on that branch; repairing it removes the branch (the latent and
// the lookups of w in it) and evaluates the other. Calls `after` on each engine where that happened, then checks
// that the trace is consistent and on the right branch.
template <class F>
void after_a_stale_branch(F&& after) {
  std::string p = "[assume w (scope_include 'w 0 (normal -0.3 0.3))]";
  for (int i = 0; i < 60; ++i) p += fmt::format("[observe (normal w 1) {}]", 1.5 + 0.01 * i);
  p += "odd: [observe (if (> w 0) (normal w 1) (normal (normal (- w) 1) 2)) 0.7]";
  for (int i = 0; i < 60; ++i) p += fmt::format("[observe (normal w 1) {}]", 1.5 - 0.01 * i);
  SubsampledOptions so{.batch = 5, .epsilon = 0.2, .drift_sigma = 1.5};
  int crossed = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    CAPTURE(seed);
    Engine e(seed);
    test::run(e, p);
    Node* odd = e.directives()[61].root;
    REQUIRE(odd->kind == NodeKind::kOutput);
    const size_t odd_id = e.directives()[61].id;
    if (number(e, "w") > 0) continue;
    SubsampledState state;
    state.unchecked_for_tests = true;  // no transition leaves a section with brush stale otherwise
    try {
      subsampled_mh_transition(e.trace(), test::block("w", BlockSpec::Mode::kOne, "subsampled_mh"), so, state);
    } catch (const Error&) {  // the move visited the datum: a section that changes structure is refused
      continue;
    }
    if (number(e, "w") < 0) continue;
    ++crossed;
    after(e);
    refresh_all(e.trace());
    CHECK(test::inconsistent_nodes(e) == 0);
    CHECK(e.trace().stale_borders().empty());
    if (e.directives()[61].id != odd_id) continue;  // forgotten
    const std::string branch = as_output(odd)->esr_parents.back()->expr->text();
    CHECK(branch == (number(e, "w") > 0 ? "(normal w 1)" : "(normal (normal (- w) 1) 2)"));
  }
  CHECK(crossed >= 2);
}

TEST_CASE("repairing every section follows the children a repair adds and removes") {
  // refresh_all took a copy of the border's children, and repaired the removed ones after they were freed.
  after_a_stale_branch([](Engine&) {});
}

TEST_CASE("a kernel whose scaffold a repair changes builds it again, from a block selected again") {
  // The general path of exact mh on w: the scaffold, built before the repair, held the removed branch. mh on one
  // choice of the default scope may select the latent in the stale branch, which the repair removes.
  // Exact mh reads, and so repairs, every section of w: nothing is stale after it.
  after_a_stale_branch([](Engine& e) {
    test::run(e, "[infer (mh w one 'drift 0.01 3)]");
    CHECK(test::inconsistent_nodes(e) == 0);
  });
  after_a_stale_branch([](Engine& e) { test::run(e, "[infer (mh default one 20)]"); });
}

TEST_CASE("forgetting a section left stale on another branch") {
  after_a_stale_branch([](Engine& e) {
    test::run(e, "[forget odd]");
    CHECK(e.directives().size() == 121);
  });
}

// Found by fuzzing: w is read inside branches that z and w decide, and by procedures z chooses; mh on one choice of
// the default scope and subsampled_mh falling back to exact mh interleave. An exact move of w that repaired a stale
// section while visiting w's sections removed reads of w it held or had numbered (heap-use-after-free under ASan;
// it fails so without DeferredRepair). Such a repair is now made after the transition is undone, and the
// transition is tried again.
TEST_CASE("a repair that would remove sections a transition holds is made after undoing the transition") {
  const std::string program =
    "[assume z (scope_include 'z 0 (normal 0 2))]\n"
    "[assume w (scope_include 'w 0 (normal 0 2))]\n"
    "[assume ops (list * normal +)]\n"
    "[assume pick (lambda (x) (lookup ops (round (* 2 (logistic (* 5 (- z x)))))))]\n"
    "d0: [observe (normal (* w 0.664) 1) 0.069]\n"
    "d1: [observe (normal (* w 0.148) 1) 0.558]\n"
    "d2: [observe (normal (* w 1.47) 1) 1.63]\n"
    "d3: [observe (normal (* w 0.839) 1) 0.938]\n"
    "d4: [observe (normal (+ (* w -0.715) (* z -0.715)) 1) 0.713]\n"
    "d5: [observe (if (> w -0.719) (normal w 1) (normal (* 2 w) 1)) 0.42]\n"
    "d6: [observe (normal (* w -1.006) 1) 0.005]\n"
    "d7: [observe (if (> (+ z w) 1.046) (normal z 1) (normal w 1)) 2.448]\n"
    "d8: [observe (normal (* w 1.034) 1) -0.017]\n"
    "d9: [observe (normal (* w -0.758) 1) 1.345]\n"
    "d10: [observe (normal (* w 1.334) 1) 1.488]\n"
    "d11: [observe (normal (+ (* w -1.478) (* z -1.478)) 1) -1.674]\n"
    "d12: [observe (normal (* w 0.615) 1) -0.144]\n"
    "d13: [observe (normal (* w -0.229) 1) 2.076]\n"
    "d14: [observe (normal (* w -0.146) 1) 0.582]\n"
    "d15: [observe (normal (+ (* w -1.257) (* z -1.257)) 1) 1.271]\n"
    "d16: [observe (normal (+ z (* w 1.492)) 1) -0.935]\n"
    "d17: [observe (normal ((pick -1.065) w 1.165) 1) 0.329]\n"
    "d18: [observe (if (> z -1.301) (normal (normal w 1) 1) (normal (- w) 2)) 1.715]\n"
    "d19: [observe (normal (+ z (* w -0.949)) 1) -0.234]\n"
    "d20: [observe (normal (+ z (* w 0.266)) 1) 0.058]\n"
    "d21: [observe (normal (* w 1.018) 1) 0.002]\n"
    "d22: [observe (normal ((pick -0.668) w 0.768) 1) -1.231]\n"
    "d23: [observe (normal (* w 1.304) 1) -0.483]\n"
    "d24: [observe (normal (* w -1.423) 1) 0.241]\n"
    "d25: [observe (if (> (+ z w) -0.643) (normal z 1) (normal w 1)) 0.825]\n"
    "d26: [observe (if (> z -0.519) (normal (normal w 1) 1) (normal (- w) 2)) 0.111]\n"
    "d27: [observe (normal (* w 0.456) 1) 1.29]\n"
    "d28: [observe (normal ((lambda (v) (* v 1.109)) w) 1) 0.329]\n"
    "d29: [observe (if (> w 1.182) (normal w 1) (normal (* 2 w) 1)) 0.136]\n"
    "d30: [observe (normal (* w -0.75) 1) 0.021]\n"
    "d31: [observe (normal (+ z (* w -0.41)) 1) 0.158]\n"
    "d32: [observe (normal (+ z (* w -0.404)) 1) 1.648]\n"
    "d33: [observe (normal (+ z (* w -0.182)) 1) -2.729]\n"
    "d34: [observe (normal (* w 1.25) 1) 0.771]\n"
    "[infer (repeat 20 (do (mh default one 1) (subsampled_mh w one 5 0.2 'drift 3 1 'fallback 'mh)))]\n";
  for (uint64_t seed : {1, 4, 7}) {
    CAPTURE(seed);
    Engine e(seed);
    test::run(e, program);
    CHECK_FALSE(e.trace().holds_nodes());
    refresh_all(e.trace());
    CHECK(test::inconsistent_nodes(e) == 0);
  }
}

// Four sections of z branch on it and read u in their branches; the other 100 are plain. g reads all four, but only
// while u > 0. Approximate moves of z that leave some of the four stale on the other branch are made while u < 0;
// `after` then proposes u past 0, so its regen builds g's branch, which reads the stale sections: repairing one
// removes its branch, whose read of u is in the regen's own scaffold (heap-use-after-free under ASan without
// HoldNodes).
double d_threshold(int i) { return -0.3 + 0.2 * i; }

/// How many of the four are on the branch z does not take (stale).
int stale_branches(Engine& e) {
  int n = 0;
  for (int i = 0; i < 4; ++i) {
    const bool above = as_output(e.trace().global(fmt::format("d{}", i)))->esr_parents.back()->expr->text() ==
                       "(normal u 1)";
    n += above != (number(e, "z") > d_threshold(i));
  }
  return n;
}

/// The program of the four, g = `sum` while u > 0, and `observe_g`.
std::string stale_reads_of_u(const std::string& sum, const std::string& observe_g) {
  std::string p =
      "[assume z (scope_include 'z 0 (normal 0 2))]"
      "[assume u (scope_include 'u 0 (normal -3 0.1))]"
      "[assume v (scope_include 'u 1 (normal 0 1))]";
  for (int i = 0; i < 100; ++i) p += fmt::format("[observe (normal (* z {}) 1) {}]", -1 + 0.02 * i, 0.5 + 0.01 * i);
  for (int i = 0; i < 4; ++i)
    p += fmt::format("[assume d{} (if (> z {}) (normal u 1) (normal (- u) 1))]", i, d_threshold(i));
  return p + fmt::format("[assume g (if (> u 0) {} 0)]", sum) + observe_g;
}

/// The approximate moves of z that leave some of the four stale.
SubsampledOptions moves_of_z() {
  SubsampledOptions so{.batch = 2, .epsilon = 0.4, .drift_sigma = 0.5};
  return so;
}

template <class F>
void after_stale_reads_of_u(const std::string& observe_g, F&& after) {
  const std::string p = stale_reads_of_u("(+ d0 d1 d2 d3)", observe_g);
  const SubsampledOptions so = moves_of_z();
  const BlockSpec spec_z = test::block("z", BlockSpec::Mode::kOne, "subsampled_mh");
  int found = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    Engine e(seed);
    test::run(e, p);
    SubsampledState state;
    // A move that visits one of the four is made by exact mh, which repairs them all.
    for (int t = 0; t < 100 && stale_branches(e) == 0; ++t) test::unchecked_fallback_move(e.trace(), spec_z, so, state);
    if (stale_branches(e) == 0) continue;
    ++found;
    after(e);
    CHECK_FALSE(e.trace().holds_nodes());
    refresh_all(e.trace());
    CHECK(test::inconsistent_nodes(e) == 0);
    CHECK(stale_branches(e) == 0);
  }
  CHECK(found >= 3);
}

TEST_CASE("a repair that the regen of mh's general path meets is made after undoing the regen") {
  // Two principals (u and v, two blocks of one scope): the general path. A proposal past 0 is rejected (u's prior
  // is far from it), but its regen reads the four, and repairs them: nothing else here does.
  after_stale_reads_of_u("[observe (normal g 1) 0.5]", [](Engine& e) {
    test::run(e, "[infer (mh u all 'drift 4 60)]");
    CHECK(stale_branches(e) == 0);
  });
}

TEST_CASE("a repair that the regen of a section in exact mh's partition meets is made after putting it back") {
  // One principal (u, or v, which nothing reads): u's border is u (g's condition and the reads in the four), its
  // sections are regenerated one by one. g's section, regenerated past 0, meets the four. When that repair was
  // deferred, the section's failed regen undid itself but the section was not put back: left detached, with
  // values the next transitions read (nil from a .vnt program: "argument 1 (mean) must be a number, got nil").
  after_stale_reads_of_u("[observe (normal g 1) 0.5]", [](Engine& e) {
    test::run(e, "[infer (mh u one 'drift 4 60)]");
    CHECK(stale_branches(e) == 0);
  });
}

TEST_CASE("a repair that observe's regen meets is made after undoing the regen") {
  // Observing u at 0.5 regenerates g's branch. The observation of g is impossible there, so the regen is undone
  // (that restore read the removed branch without HoldNodes).
  after_stale_reads_of_u("[observe (uniform_continuous (- g 0.01) (+ g 0.01)) 0]", [](Engine& e) {
    CHECK_THROWS_WITH_AS(test::run(e, "[observe u 0.5]"),
                         doctest::Contains("observing 0.5 makes (uniform_continuous (- g 0.01) (+ g 0.01)) at "), Error);
    CHECK(number(e, "u") < 0);
    CHECK(e.directives().size() == 109);
  });
  after_stale_reads_of_u("[observe (normal g 1) 0.5]", [](Engine& e) {
    test::run(e, "[observe u 0.5]");
    CHECK(number(e, "u") == 0.5);
    CHECK(stale_branches(e) == 0);
  });
}

// The same observation with a draw in g's new branch before its reads of the four: observe's regen draws it, meets a
// stale section, is undone, and starts again after the repair with the same numbers. `eager` repairs every section
// after each move of z: both must give g the same value.
TEST_CASE("observe's regen interrupted by a repair draws what it draws on a trace repaired at once") {
  const std::string p = stale_reads_of_u("(+ (normal 0 1) d0 d1 d2 d3)", "[observe (normal g 1) 0.5]");
  const SubsampledOptions so = moves_of_z();
  const BlockSpec spec_z = test::block("z", BlockSpec::Mode::kOne, "subsampled_mh");
  int found = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    Engine lazy(seed), eager(seed);
    test::run(lazy, p);
    test::run(eager, p);
    SubsampledState sl, se;
    for (int t = 0; t < 100 && stale_branches(lazy) == 0; ++t) {
      REQUIRE(test::unchecked_fallback_move(lazy.trace(), spec_z, so, sl) ==
              test::unchecked_fallback_move(eager.trace(), spec_z, so, se));
      refresh_all(eager.trace());
    }
    if (stale_branches(lazy) == 0) continue;
    ++found;
    test::run(lazy, "[observe u 0.5]");
    test::run(eager, "[observe u 0.5]");
    CHECK(stale_branches(lazy) == 0);
    CHECK(number(lazy, "g") == number(eager, "g"));
  }
  CHECK(found >= 3);
}

TEST_CASE("a repair whose new branch reads another parameter's stale section reads it as it is") {
  // h's section of w takes its other branch when repaired, and that branch reads e, in a stale section of z. Both
  // sections hold (+ h k) and its observation (k applies a compound procedure: e's section is repaired by a detach
  // and a regen, not in place). Repaired in the middle of h's repair, e's section detached nodes h's repair had
  // taken out ("normal: argument 1 (mean) must be a number, got nil", found by the fuzzer). Now e is read as it is;
  // h, computed from it, is in e's section, and is repaired with it when read.
  std::string p =
      "[assume z (scope_include 'z 0 (normal 0 1))]"
      "[assume w (scope_include 'w 0 (normal -0.5 0.3))]";
  // Data that differ: with equal l_i (s_l = 0) the test would read every section, h's too.
  for (int i = 0; i < 100; ++i) p += fmt::format("[observe (normal z 1) {0}] [observe (normal w 1) {0}]", 0.02 * i);
  p += "[assume e (* z 0.5)] [assume k ((lambda (v) (+ v 0)) e)] [assume h (if (> w 0) (* e 1) 0)]"
       "[observe (normal (+ h k) 1) 0.3]";
  SubsampledOptions so{.batch = 2, .epsilon = 0.3, .drift_sigma = 0.4};
  int found = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    CAPTURE(seed);
    Engine e(seed);
    test::run(e, p);
    SubsampledState sz, sw;
    auto e_stale = [&] { return number(e, "e") != 0.5 * number(e, "z"); };
    auto h_stale = [&] { return (number(e, "w") > 0) != (number(e, "h") == number(e, "e")); };
    const BlockSpec spec_z = test::block("z", BlockSpec::Mode::kOne, "subsampled_mh");
    const BlockSpec spec_w = test::block("w", BlockSpec::Mode::kOne, "subsampled_mh");
    // w first: while h reads 0, nothing reads e; a move of w that visits h's section repairs it, reading e.
    // A move that visits h's section is made by exact mh, which repairs it.
    for (int t = 0; t < 100 && !h_stale(); ++t) test::unchecked_fallback_move(e.trace(), spec_w, so, sw);
    for (int t = 0; t < 50 && !e_stale(); ++t) test::unchecked_fallback_move(e.trace(), spec_z, so, sz);
    if (!e_stale() || !h_stale()) continue;
    ++found;
    test::run(e, "[predict h]");
    CHECK(number(e, "h") == (number(e, "w") > 0 ? 0.5 * number(e, "z") : 0));
    refresh_all(e.trace());
    CHECK(test::inconsistent_nodes(e) == 0);
  }
  CHECK(found >= 2);
}

}  // namespace
}  // namespace vnt::stale_procedure_tests
