// Only borders of accepted subsampled moves count stale children: exact mh alone never leaves one.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <fmt/format.h>

#include "runtime/infer/mh.hpp"
#include "runtime/infer/subsampled_mh.hpp"
#include "tests/support/block_spec.hpp"
#include "tests/support/engine_fixture.hpp"

namespace vnt::stale_counts_tests {
namespace {

/// Runs `n` exact mh transitions on one choice of the default scope, requiring that each leaves no border stale, and
/// calls `after` after each.
template <class F>
void exact_moves(Engine& e, int n, F&& after) {
  const BlockSpec spec = test::block("default", BlockSpec::Mode::kOne, "mh");
  MhOptions o;
  for (int i = 0; i < n; ++i) {
    CAPTURE(i);
    mh_transition(e.trace(), spec, o);
    REQUIRE(e.trace().stale_borders().empty());
    after();
  }
}

TEST_CASE("exact mh alone never makes a border stale, nor a node that copied a version") {
  // Exact mh through local sections takes c0 for a border (its version moves at each accepted move). c3's if
  // copies that version when its branch is c0 (an output takes its family root's), and children added under it
  // were counted stale; an undone regen left the count, and every later move reaching c3 was undone for a repair
  // with nothing to do.
  Engine e(1);
  test::run(e, "[assume f2 (lambda (x) (if x (flip 0.311) (not c3)))] [assume c0 (flip 0.835)]"
               "[assume c3 (if c0 c0 true)]"
               "[observe (if c0 (normal (if (f2 true) -0.91 -0.95) 1.5) (normal (if c3 -0.64 0.78) 2)) -0.82]");
  int moves_of_c0 = 0;
  bool before = std::get<bool>(e.trace().global("c0")->value);
  exact_moves(e, 2000, [&] {
    const bool now = std::get<bool>(e.trace().global("c0")->value);
    moves_of_c0 += now != before ? 1 : 0;
    before = now;
  });
  CHECK(moves_of_c0 > 100);
}

// Found by the posterior fuzzer (seed 876). c3, an `if`, becomes a border of exact mh through local sections; when its
// branch changed, its output took the version of its new family root, as outputs do, and its sections looked stale
// against it. A kernel that met one was undone, repaired nothing and started again: at once with new numbers
// (undoing moves for nothing), and for ever since it starts again with the same ones.
TEST_CASE("a border whose branch changes keeps its version") {
  Engine e(876);
  test::run(e, "[assume f0 (lambda (x) (if x (flip 0.206) c0))] [assume c0 (flip 0.497)] [assume c1 (flip 0.301)]"
               "[assume c3 (if (if c0 c1 c0) (f0 c0) c0)]"
               "[assume a0 (if c0 (normal (if (f0 c3) 0.55 0.3) 1.5) (normal (if (flip 0.562) 0.63 0.86) 1))]"
               "[assume a1 (if c1 (normal (+ a0 (if (flip 0.292) 0.13 -0.69)) 1.5) (normal (if c3 0.35 0.71) 2))]"
               "[observe a0 -1.25] [observe a1 0.47]"
               "[observe (if c0 (normal (if c3 -0.81 -0.82) 1)"
               "             (normal (if (flip (if c1 0.531 0.256)) 0.93 -0.61) 1)) -0.37]");
  int borders = 0;
  exact_moves(e, 3000, [&] { borders += e.trace().global("c3")->border ? 1 : 0; });
  CHECK(borders > 100);
}

/// How many children of `border` have another version than it: its stale sections (no plates here).
size_t stale_children(const Node* border) {
  size_t n = 0;
  for (const Node* c : border->children) n += c->version != border->version ? 1 : 0;
  return n;
}

// Two borders whose approximate moves interleave, z read by one of w's sections ((normal w 1) reads w through a
// lookup, so no node is both a border and a section root of the other): after every transition, each border counts
// exactly the children whose version is not its own. A count too low would let a stale section be read unrepaired
// (ensure_fresh looks only under borders with a count).
TEST_CASE("two borders moved in turn by approximate moves: each counts exactly its stale children") {
  std::string program = "[assume w (scope_include 'w 0 (normal 0 1))] [assume z (scope_include 'z 0 (normal w 1))]";
  for (int i = 0; i < 30; ++i) {
    program += fmt::format("[observe (normal (* w {}) 1) {}]", 0.5 + 0.03 * i, 0.4 + 0.02 * i);
    program += fmt::format("[observe (normal (* z {}) 1) {}]", 0.5 + 0.03 * i, 1.2 - 0.02 * i);
  }
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    CAPTURE(seed);
    Engine e(seed);
    test::run(e, program);
    SubsampledOptions so{.batch = 2, .epsilon = 0.3, .drift_sigma = 0.2};
    SubsampledState sw, sz;
    const BlockSpec w = test::block("w", BlockSpec::Mode::kAll, "subsampled_mh");
    const BlockSpec z = test::block("z", BlockSpec::Mode::kAll, "subsampled_mh");
    for (int i = 0; i < 300; ++i) {
      CAPTURE(i);
      subsampled_mh_transition(e.trace(), i % 2 == 0 ? w : z, so, i % 2 == 0 ? sw : sz);
      for (const char* name : {"w", "z"}) {
        CAPTURE(name);
        const Node* b = e.trace().global(name);
        const auto it = e.trace().stale_borders().find(const_cast<Node*>(b));
        REQUIRE(stale_children(b) == (it == e.trace().stale_borders().end() ? 0 : it->second));
      }
    }
  }
}

}  // namespace
}  // namespace vnt::stale_counts_tests
