// BorderReach::section_roots: which node sections of a border a node is in, found by walking up from it through the
// nodes that follow the border (the look for never-stale sections asks it of a node that gained a reader).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "runtime/regen/border_reach.hpp"
#include "runtime/trace/trace.hpp"
#include "tests/support/engine_fixture.hpp"

namespace vnt::border_reach_tests {
namespace {

bool is_child_of(const Node* child, const Node* parent) {
  return std::find(parent->children.begin(), parent->children.end(), child) != parent->children.end();
}

TEST_CASE("section roots: the border's children a node is reached from, through nodes that follow it") {
  Engine e(1);
  test::run(e, "[assume w (normal 0 1)] [assume m (* w 3)] [assume k (+ m (* w 2))] [assume u (normal 0 1)]"
               "[assume v (* u 2)] [assume mixed (+ v m)]");
  Node* w = e.trace().global("w");
  BorderReach reach(w);
  auto roots_of = [&](const char* name) {
    std::vector<Node*> roots;
    REQUIRE(reach.section_roots(e.trace().global(name), roots, 100));
    for (Node* r : roots) CHECK(is_child_of(r, w));
    return roots;
  };
  const std::vector<Node*> m = roots_of("m");  // (* w 3): its read of w
  CHECK(m.size() == 1);
  const std::vector<Node*> k = roots_of("k");  // through m, and its own read of w
  CHECK(k.size() == 2);
  CHECK(std::count(k.begin(), k.end(), m[0]) == 1);
  CHECK(roots_of("v").empty());  // u is another random choice: v follows nothing of w
  CHECK(roots_of("mixed") == m);  // the part through v reaches no section

  // A walk longer than allowed says so, and leaves what was found before as it was.
  std::vector<Node*> roots{w};
  CHECK_FALSE(reach.section_roots(e.trace().global("k"), roots, 1));
  CHECK(roots == std::vector<Node*>{w});
}

}  // namespace
}  // namespace vnt::border_reach_tests
