// A transition that meets a stale section whose repair moves the trace's shape starts again after the repair with
// the random numbers it had drawn, and the repair draws from a stream of its own: the move is then the one a trace
// repaired at once makes. Drawing new numbers instead favoured the moves that meet no stale section.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <string>
#include <fmt/format.h>

#include "runtime/infer/mh.hpp"
#include "runtime/infer/subsampled_mh.hpp"
#include "runtime/regen/refresh.hpp"
#include "tests/support/block_spec.hpp"
#include "tests/support/engine_fixture.hpp"
#include "tests/support/stale_brush.hpp"

namespace vnt::restart_after_repair_tests {
namespace {

using test::block;

constexpr double kThreshold = 0.65;  // about where w's posterior is: the odd datum changes branch often

/// 30 plain data of w and one odd datum in the middle, whose branch depends on w and whose other branch draws a latent
/// choice (brush from its prior when repaired).
std::string program() {
  std::string p = "[assume w (scope_include 'w 0 (normal 0.5 1))]";
  for (int i = 0; i < 30; ++i) {
    p += fmt::format("[observe (normal (* w {}) 1) {}]", 0.5 + 0.05 * i, 0.4 + 0.03 * i);
    if (i == 15) p += fmt::format("odd: [observe (normal (if (> w {}) w (normal (* 2 w) 0.5)) 1) 2]", kThreshold);
  }
  return p;
}

double w_of(Engine& e) { return std::get<double>(e.report("w")); }

/// Whether the odd datum is on the branch w does not take (a stale section the approximate move did not visit).
bool odd_stale(Engine& e) {
  Node* odd = nullptr;
  for (const DirectiveRecord& r : e.directives())
    if (r.label == "odd") odd = r.root;
  REQUIRE(odd != nullptr);
  const OutputNode* branch = as_output(as_output(odd)->operands[0]);  // the `if`
  const bool above = branch->esr_parents.back()->expr->text() == "w";
  return above != (std::get<double>(e.trace().global("w")->value) > kThreshold);
}

// `lazy` repairs stale sections when an exact kernel reads them, `eager` right after each approximate move. Their
// kernels draw the same numbers, so they must make the same decisions and reach the same values. Exact mh on one
// choice of the default scope selects the latent of the stale branch, or proposes to w: its scaffold meets the stale
// section, whose repair removes nodes of it (the latent too), and it selects and proposes again. With new numbers,
// or a repair drawing from the trace's stream at another time than eager's, the two part.
TEST_CASE("a kernel interrupted by a repair moves as on a trace repaired at once") {
  Engine lazy(7), eager(7);
  test::run(lazy, program());
  test::run(eager, program());
  SubsampledOptions so{.batch = 2, .epsilon = 0.3, .drift_sigma = 0.3};
  SubsampledState sl, se;
  const BlockSpec w = block("w", BlockSpec::Mode::kAll, "subsampled_mh");
  const BlockSpec any = block("default", BlockSpec::Mode::kOne, "mh");
  for (const bool partition : {true, false}) {
    CAPTURE(partition);
    MhOptions exact;
    exact.allow_partition = partition;
    int restarts = 0;  // exact moves that met the stale branch, which is fresh after them
    for (int c = 0; c < 600; ++c) {
      CAPTURE(c);
      REQUIRE(test::unchecked_fallback_move(lazy.trace(), w, so, sl) ==
              test::unchecked_fallback_move(eager.trace(), w, so, se));
      refresh_all(eager.trace());
      for (int k = 0; k < 3; ++k) {
        const bool stale = odd_stale(lazy);
        REQUIRE(mh_transition(lazy.trace(), any, exact) == mh_transition(eager.trace(), any, exact));
        restarts += stale && !odd_stale(lazy) ? 1 : 0;
        REQUIRE(w_of(lazy) == w_of(eager));
      }
    }
    MESSAGE("exact moves that repaired the stale branch: " << restarts);
    CHECK(restarts > 20);
    refresh_all(lazy.trace());
    CHECK(test::fingerprint_of(lazy) == test::fingerprint_of(eager));
  }
}

// The same for subsampled_mh on u, one of whose data reads d, a section of w that branches on it. A transition that
// draws that datum reads d: a repair that would remove nodes it holds is made after the transition is undone, and
// the transition starts again with the numbers of both its streams (the trace's, and the one ordering sections).
TEST_CASE("a subsampled transition interrupted by a repair moves as on a trace repaired at once") {
  std::string p = "[assume w (scope_include 'w 0 (normal 0.5 1))] [assume u (scope_include 'u 0 (normal 0 1))]";
  for (int i = 0; i < 30; ++i)
    p += fmt::format("[observe (normal (* w {0}) 1) {1}] [observe (normal (* u {0}) 1) {2}]", 0.5 + 0.05 * i,
                     0.4 + 0.03 * i, 0.2 - 0.02 * i);
  // Its branches do not read w: a repair that changes branch then leaves w's children (the sections the test draws
  // by number) in their order, as eager's did.
  p += fmt::format("[assume d (if (> w {}) 1.5 (normal 1 0.5))] [observe (normal d 1) 2]", kThreshold);
  for (int i = 0; i < 3; ++i) p += fmt::format("[observe (normal (+ u d) 1) {}]", 1.5 + 0.1 * i);
  Engine lazy(9), eager(9);
  test::run(lazy, p);
  test::run(eager, p);
  auto d_stale = [](Engine& e) {
    const bool above = as_output(e.trace().global("d"))->esr_parents.back()->expr->text() == "1.5";
    return above != (w_of(e) > kThreshold);
  };
  SubsampledOptions so{.batch = 2, .epsilon = 0.3, .drift_sigma = 0.3};
  SubsampledState wl, we, ul, ue;
  const BlockSpec w = block("w", BlockSpec::Mode::kAll, "subsampled_mh");
  const BlockSpec u = block("u", BlockSpec::Mode::kAll, "subsampled_mh");
  int w_accepted = 0;
  int restarts = 0;  // transitions on u that met the stale branch, which is fresh after them
  for (int c = 0; c < 1500; ++c) {
    CAPTURE(c);
    // New states for w: no refusal remembered, so each move on w tries to subsample (and mostly does).
    wl = SubsampledState();
    we = SubsampledState();
    REQUIRE(test::unchecked_fallback_move(lazy.trace(), w, so, wl) ==
            test::unchecked_fallback_move(eager.trace(), w, so, we));
    w_accepted += static_cast<int>(wl.stats.accepted);
    refresh_all(eager.trace());
    const bool stale = d_stale(lazy);
    REQUIRE(subsampled_mh_transition(lazy.trace(), u, so, ul) == subsampled_mh_transition(eager.trace(), u, so, ue));
    restarts += stale && !d_stale(lazy) ? 1 : 0;
    REQUIRE(std::get<double>(lazy.report("u")) == std::get<double>(eager.report("u")));
  }
  MESSAGE("approximate moves of w accepted: " << w_accepted << ", transitions on u that repaired the stale branch: "
                                               << restarts);
  CHECK(w_accepted > 300);
  CHECK(restarts > 20);
  CHECK(ul.stats.exact_transitions == 0);
  refresh_all(lazy.trace());
  refresh_all(eager.trace());
  CHECK(test::fingerprint_of(lazy) == test::fingerprint_of(eager));
}

}  // namespace
}  // namespace vnt::restart_after_repair_tests
