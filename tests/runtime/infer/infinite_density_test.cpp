// States of infinite density: a transition whose proposed (or current) state gives a density in the trace the value
// +inf fails with an error at that random application, and leaves the trace exactly as it was before it, on every
// path that scores densities: the general scaffold, the partitioned one (chains, sections in place, sections
// regenerated, plate rows), approximate moves and stale-section repair. A density of NaN is still a rejection.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>
#include <fmt/format.h>

#include "runtime/core/diagnostics.hpp"
#include "runtime/regen/refresh.hpp"
#include "runtime/sp/distribution_sp.hpp"
#include "tests/support/block_spec.hpp"
#include "tests/support/engine_fixture.hpp"
#include "tests/support/lockstep.hpp"

namespace vnt::infinite_density_tests {
namespace {

BlockSpec w_all(const char* kernel = "mh") { return test::block("w", BlockSpec::Mode::kAll, kernel); }

double w_of(Engine& e) { return std::get<double>(e.report("w")); }

/// Runs `transition` once; if it throws, requires an inference error and the trace exactly as before (its stale
/// values too), and returns the error's first line ("test.vnt:L:C: error: ...").
template <class F>
std::optional<std::string> failure_of(Engine& e, F&& transition) {
  const std::string before = test::fingerprint_of(e);
  const size_t stale = test::inconsistent_nodes(e);
  try {
    transition();
  } catch (const Error& err) {
    REQUIRE(err.kind() == ErrorKind::kInference);
    REQUIRE(test::fingerprint_of(e) == before);
    REQUIRE(test::inconsistent_nodes(e) == stale);
    return render_error_line(err);
  }
  return std::nullopt;
}

/// "test.vnt:1:C: error: MESSAGE" for the expression `expr`, the first one in `program` at or after `from`.
std::string error_at(const std::string& program, const std::string& expr, const std::string& message,
                     size_t from = 0) {
  const size_t at = program.find(expr, from);
  REQUIRE(at != std::string::npos);
  return fmt::format("test.vnt:1:{}: error: {}", at + 1, message);
}

// w starts at 1, where (beta w 1) has density 1 at 0: below 1 that density is +inf, above 1 zero. Forty data read
// w through (normal w 1), and `datum` is the one at 0.
std::string program_with(const std::string& datum, const std::string& prelude = "") {
  std::string p = "[assume w (scope_include 'w 0 (uniform_continuous 0 2))] one: [observe w 1]" + prelude;
  for (int i = 0; i < 40; ++i) p += fmt::format("[observe (normal w 1) {}]", 0.5 + 0.02 * i);
  return p + fmt::format("[observe {} 0] [forget one]", datum);
}

struct Datum {
  const char* text;     // observed at 0
  const char* prelude;  // directives it needs
  const char* leaf;     // the application whose density becomes infinite
  const char* path;     // the partitioned path that scores it
};

constexpr Datum kData[] = {
    {"(beta w 1)", "", "(beta w 1)", "a chain"},
    {"(beta (* w w) 1)", "", "(beta (* w w) 1)", "a section evaluated in place"},
    {"(f w)", "[assume f (lambda (a) (beta a 1))]", "(beta a 1)", "a section regenerated"},
};

// The general path, subsampled_mh at eps = 0 and mh through the partition make the same decisions with the same
// draws (lockstep.hpp), so they meet the infinite density at the same transition, each with its own kernel name.
TEST_CASE("a proposal of infinite density fails the transition on every exact path, leaving the trace as it was") {
  for (const Datum& d : kData) {
    CAPTURE(d.path);
    const std::string program = program_with(d.text, d.prelude);
    const size_t site = program.find(d.leaf);
    const std::string what = fmt::format("the proposal gives {} an infinite density at its value 0", d.leaf);
    const std::string mh = error_at(program, d.leaf, "mh: " + what, site);
    const std::string sub = error_at(program, d.leaf, "subsampled_mh: " + what, site);
    test::ThreeWay t(5, program);
    const test::Lockstep o(1000, 0.2);
    int i = 0;
    for (; i < 100; ++i) {
      CAPTURE(i);
      std::optional<bool> general, partitioned, subsampled;
      std::optional<std::string> e1 =
          failure_of(t.general, [&] { general = mh_transition(t.general.trace(), w_all(), o.exact); });
      std::optional<std::string> e2 =
          failure_of(t.part, [&] { partitioned = mh_transition(t.part.trace(), w_all(), o.partitioned); });
      std::optional<std::string> e3 = failure_of(t.sub, [&] {
        subsampled = subsampled_mh_transition(t.sub.trace(), w_all("subsampled_mh"), o.sub, t.state);
      });
      REQUIRE(e1.has_value() == e2.has_value());
      REQUIRE(e1.has_value() == e3.has_value());
      if (e1) {
        CHECK(*e1 == mh);
        CHECK(*e2 == mh);
        CHECK(*e3 == sub);
        break;
      }
      REQUIRE(*general == *partitioned);
      REQUIRE(*general == *subsampled);
      REQUIRE(w_of(t.general) >= 1);
    }
    CHECK(i < 100);
    CHECK(t.state.stats.exact_transitions == 0);  // subsampled_mh took the partitioned path
    CHECK(w_of(t.general) >= 1);
  }
}

// A plate row observed at 0: scored by the general path in the plate's total (attach), and by the partitioned path
// row by row (score_plates) once node sections are there too. The error names the row and the application.
TEST_CASE("a plate row of infinite density fails the transition, with the row named") {
  const std::string program = "[assume w (scope_include 'w 0 (uniform_continuous 0 2))] one: [observe w 1]"
                              "[assume y_x (lambda (x) (beta w x))]";
  const std::string what = "the proposal gives (beta w x) an infinite density at its value 0 (row 21 of (y_x ...))";
  for (const bool nodes_too : {false, true}) {
    CAPTURE(nodes_too);
    test::ThreeWay t(5, program, [&](Engine& e) {
      for (int i = 0; i < 20; ++i) e.observe_apply("y_x", {Value(1.0)}, Value(0.3 + 0.02 * i));
      e.observe_apply("y_x", {Value(1.0)}, Value(0.0));
      if (nodes_too) test::run(e, "[observe (normal w 1) 1.2] [observe (normal w 1) 0.8]");
      test::run(e, "[forget one]");
    });
    const test::Lockstep o(1000, 0.2);
    bool failed = false;
    for (int i = 0; i < 100 && !failed; ++i) {
      CAPTURE(i);
      std::optional<std::string> e1 =
          failure_of(t.general, [&] { mh_transition(t.general.trace(), w_all(), o.exact); });
      std::optional<std::string> e2 =
          failure_of(t.part, [&] { mh_transition(t.part.trace(), w_all(), o.partitioned); });
      std::optional<std::string> e3 = failure_of(t.sub, [&] {
        subsampled_mh_transition(t.sub.trace(), w_all("subsampled_mh"), o.sub, t.state);
      });
      REQUIRE(e1.has_value() == e2.has_value());
      REQUIRE(e1.has_value() == e3.has_value());
      if (!e1) continue;
      CHECK(*e1 == error_at(program, "(beta w x)", "mh: " + what));
      CHECK(*e2 == error_at(program, "(beta w x)", "mh: " + what));
      CHECK(*e3 == error_at(program, "(beta w x)", "subsampled_mh: " + what));
      failed = true;
    }
    CHECK(failed);
    CHECK(t.state.stats.exact_transitions == 0);
    CHECK(w_of(t.general) >= 1);
  }
}

// An approximate move (eps > 0) can accept w below 1 without scoring the section at 0, which is then stale (or, for
// a plate row, scored afresh by whatever reads it next). The next transition that scores it under the current value
// fails, whatever its path: the state was already one where no MH ratio means anything.
TEST_CASE("a current state of infinite density, accepted by an approximate move, fails the next exact transition") {
  const std::string message = "subsampled_mh: an approximate move (eps > 0) accepted a value under which {} has an "
                              "infinite density at its value 0";
  for (const Datum& d : kData) {
    CAPTURE(d.path);
    for (const bool general : {true, false}) {
      CAPTURE(general);
      const std::string program = program_with(d.text, d.prelude);
      const std::string expected = error_at(program, d.leaf, fmt::format(fmt::runtime(message), d.leaf),
                                            program.find(d.leaf));
      Engine e(3);
      test::run(e, program);
      SubsampledOptions so{.batch = 2, .epsilon = 0.3, .drift_sigma = 0.2};
      SubsampledState state;
      // Until w < 1 is accepted; a transition that scores the datum under a proposal below 1 fails instead.
      for (int i = 0; i < 400 && w_of(e) >= 1; ++i)
        failure_of(e, [&] { subsampled_mh_transition(e.trace(), w_all("subsampled_mh"), so, state); });
      REQUIRE(w_of(e) < 1);
      REQUIRE(e.trace().stale_borders().size() == 1);
      // A transition repairs the stale sections it reads before it scores them, and a repair is not undone when the
      // transition then fails. Those that can be are repaired here, so that the trace must be exactly as it was:
      // the datum's is too when it is repaired in place, which computes no density (the transition then finds it
      // in its weight of the current state); a repair by regen fails and leaves it stale, as in the transition.
      Node* border = e.trace().stale_borders().begin()->first;
      for (Node* c : std::vector<Node*>(border->children.begin(), border->children.end())) {
        try {
          refresh_section(e.trace(), border, c);
        } catch (const Error& err) {
          CHECK(render_error_line(err) == expected);
        }
      }
      MhOptions exact;
      exact.allow_partition = !general;
      std::optional<std::string> err = failure_of(e, [&] { mh_transition(e.trace(), w_all(), exact); });
      REQUIRE(err.has_value());
      CHECK(*err == expected);
    }
  }
}

// A density of NaN (an SP may return one) is not an infinite density: the proposal is rejected, on mh's
// partitioned path as on its general one (where log alpha is NaN), and the chain goes on. The stdlib's densities
// are never NaN for valid parameters; this one is NaN wherever its parameter is below 1.
struct NanBelowOne {
  static constexpr std::string_view kName = "nan_below_one";
  static constexpr ParamSpec kParams[] = {{"a", Domain::kReal}};
  static constexpr Support kSupport = Support::kReal;
  static double simulate(Rng& /*rng*/, double /*a*/) { return 0; }
  static double log_density(double /*x*/, double a) {
    return a < 1 ? std::numeric_limits<double>::quiet_NaN() : 0.0;
  }
};

TEST_CASE("a section whose density is NaN rejects the proposal on mh's partitioned path, as on the general path") {
  const std::string program =
      "[assume w (scope_include 'w 0 (uniform_continuous 0 2))] one: [observe w 1.5]"
      "[observe (nan_below_one w) 0] [observe (normal w 1) 0.9] [observe (normal w 1) 1.1] [forget one]";
  Engine general(4), part(4);
  for (Engine* e : {&general, &part}) {
    e->registry().add(make_distribution_sp<NanBelowOne>());
    test::run(*e, program);
  }
  MhOptions exact, partitioned;
  exact.drift_sigma = partitioned.drift_sigma = 0.3;
  exact.allow_partition = false;
  int accepted = 0;
  for (int i = 0; i < 200; ++i) {
    CAPTURE(i);
    const bool a = mh_transition(general.trace(), w_all(), exact);
    REQUIRE(a == mh_transition(part.trace(), w_all(), partitioned));
    REQUIRE(w_of(part) >= 1);
    accepted += a;
  }
  CHECK(test::fingerprint_of(general) == test::fingerprint_of(part));
  CHECK(accepted > 20);
}

}  // namespace
}  // namespace vnt::infinite_density_tests
