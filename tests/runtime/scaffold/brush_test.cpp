// Which requested families a scaffold takes for brush: those whose every request is in D, counted once each.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "runtime/scaffold/scaffold.hpp"
#include "runtime/trace/procedures.hpp"
#include "runtime/trace/trace.hpp"
#include "tests/support/engine_fixture.hpp"

namespace vnt::scaffold_brush_tests {
namespace {

/// The root of the family (g k) that mem procedure `g` holds for key k.
Node* mem_family(Engine& e, const std::string& g, double k) {
  const Value& v = e.trace().global(g)->value;
  auto& mem = static_cast<MemProcedure&>(*std::get<ProcPtr>(v));
  auto it = mem.families().find(make_list({Value(k)}));
  REQUIRE(it != mem.families().end());
  return it->second;
}

TEST_CASE("a mem family also requested outside D is not brush, however many requests in D reach it") {
  // c1's else branch is a call of g with a key computed from c0: that request is in D, and it is also in the
  // branch family the change of c1's predicate disables. Counted twice, with the predicate's own call of g, its
  // requests in D made three of the three, and (g 2), which c2 still asks for, was brush: regenerated nowhere, it
  // took c0 with it (the chain stayed at c0 = false for ever).
  Engine e(50);
  test::run(e, "[assume g (mem (lambda (k) (if c0 (flip 0.242) (flip 0.219))))] [assume c0 (flip 0.3)]"
               "[assume c1 (if (g (if c0 1 2)) c0 (g (if c0 1 2)))] [assume c2 (g 2)]");
  REQUIRE_FALSE(std::get<bool>(e.trace().global("c0")->value));  // so (g 2) is requested three times
  Node* family = mem_family(e, "g", 2);
  REQUIRE(family->num_requests == 3);
  Node* c0 = e.trace().global("c0");
  Node* principals[] = {c0};
  Scaffold s = build_scaffold(e.trace(), principals, {});
  CHECK_FALSE(s.is_brush(family));
  CHECK(s.is_resampling(family));  // its body reads c0
  CHECK(s.is_resampling(c0));
}

}  // namespace
}  // namespace vnt::scaffold_brush_tests
