// Only borders of accepted subsampled moves count stale children: exact mh alone never leaves one.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "runtime/infer/mh.hpp"
#include "tests/support/block_spec.hpp"
#include "tests/support/engine_fixture.hpp"

namespace vnt::stale_counts_tests {
namespace {

TEST_CASE("exact mh alone never makes a border stale, nor a node that copied a version") {
  // Exact mh through local sections takes c0 for a border (its version moves at each accepted move). c3's if
  // copies that version when its branch is c0 (an output takes its family root's), and children added under it
  // were counted stale; an undone regen left the count, and every later move reaching c3 was undone for a repair
  // with nothing to do.
  Engine e(1);
  test::run(e, "[assume f2 (lambda (x) (if x (flip 0.311) (not c3)))] [assume c0 (flip 0.835)]"
               "[assume c3 (if c0 c0 true)]"
               "[observe (if c0 (normal (if (f2 true) -0.91 -0.95) 1.5) (normal (if c3 -0.64 0.78) 2)) -0.82]");
  const BlockSpec spec = test::block("default", BlockSpec::Mode::kOne, "mh");
  MhOptions o;
  int moves_of_c0 = 0;
  for (int i = 0; i < 2000; ++i) {
    CAPTURE(i);
    const bool before = std::get<bool>(e.trace().global("c0")->value);
    mh_transition(e.trace(), spec, o);
    moves_of_c0 += std::get<bool>(e.trace().global("c0")->value) != before ? 1 : 0;
    REQUIRE(e.trace().stale_borders().empty());
  }
  CHECK(moves_of_c0 > 100);
}

}  // namespace
}  // namespace vnt::stale_counts_tests
