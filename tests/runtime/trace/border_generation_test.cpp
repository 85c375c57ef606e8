// Trace::border_generation moves when a node first takes a border version, whatever version it held before: a
// node can hold one as another border's section root, and kernels' FreshWatch notes (refresh.hpp) made before
// it was a border do not watch its children.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "runtime/engine/engine.hpp"
#include "runtime/trace/trace.hpp"

namespace vnt::border_generation_tests {
namespace {

TEST_CASE("border generation: a node's first border version moves it, later ones do not") {
  Engine engine(1);
  Trace& t = engine.trace();
  Node a(NodeKind::kOutput, nullptr), b(NodeKind::kOutput, nullptr);
  const uint64_t g0 = t.border_generation();

  a.version = t.next_border_version(a);
  CHECK(a.border);
  CHECK(t.border_generation() == g0 + 1);
  a.version = t.next_border_version(a);
  CHECK(t.border_generation() == g0 + 1);  // a was a border already

  b.version = a.version;  // b as a section root of a: computed from a's value
  REQUIRE_FALSE(b.border);
  const uint64_t v = t.next_border_version(b);
  CHECK(b.border);
  CHECK(t.border_generation() == g0 + 2);
  CHECK(v > a.version);  // never a version used before, which a stale section of b could hold
}

}  // namespace
}  // namespace vnt::border_generation_tests
