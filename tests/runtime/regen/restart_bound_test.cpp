// A move that repairs interrupt starts again at most as often as there are stale sections to repair (and a few):
// past that, an internal error, not a move started again for ever.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <string>

#include "runtime/regen/refresh.hpp"
#include "tests/support/engine_fixture.hpp"

namespace vnt::restart_bound_tests {
namespace {

/// How many rounds a new bound allows before it throws (at most `cap`).
int rounds_allowed(const Trace& trace, int cap = 100) {
  RestartBound bound;
  for (int i = 0; i < cap; ++i) {
    try {
      bound.next(trace);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::kInternal);
      CHECK(std::string(e.what()).find("each after a repair that left a section stale") != std::string::npos);
      return i;
    }
  }
  return cap;
}

TEST_CASE("a move starts again at most once per stale section, and a few times more") {
  Engine e(1);
  test::run(e, "[assume w (normal 0 1)] [assume u (normal 0 1)]");
  CHECK(rounds_allowed(e.trace()) == 16);
  // Counted when the first round ends: the sections stale then (a fake count here).
  e.trace().stale_borders()[e.trace().global("w")] = 3;
  e.trace().stale_borders()[e.trace().global("u")] = 2;
  CHECK(rounds_allowed(e.trace()) == 21);
  e.trace().stale_borders().clear();
}

}  // namespace
}  // namespace vnt::restart_bound_tests
