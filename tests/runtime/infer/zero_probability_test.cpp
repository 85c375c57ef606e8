// States of probability zero: an approximate move (eps > 0) can accept a value under which a section it did not
// draw has probability zero. Exact mh leaves such a state for any proposal it can evaluate (rho = -inf), so the
// partitioned kernels must too: such a section has l_i = +inf, also where the proposal rules it out as well.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <fmt/format.h>

#include "runtime/infer/subsampled_mh.hpp"
#include "runtime/regen/refresh.hpp"
#include "tests/support/block_spec.hpp"
#include "tests/support/engine_fixture.hpp"
#include "tests/support/lockstep.hpp"

namespace vnt::zero_probability_tests {
namespace {

BlockSpec w_all() { return test::block("w", BlockSpec::Mode::kAll, "subsampled_mh"); }

double w_of(Engine& e) { return std::get<double>(e.report("w")); }

size_t stale_count(Engine& e) {
  size_t n = 0;
  for (const auto& [border, count] : e.trace().stale_borders()) n += count;
  return n;
}

SubsampledOptions approximate(double sigma) {
  SubsampledOptions so{.batch = 2, .epsilon = 0.4, .drift_sigma = sigma};
  return so;
}

// y_i ~ uniform(-z_i, w): a value of w below a datum has density zero there, and l_i differ between data (so the
// test can decide from a few of them, and accept w below a datum it did not draw).
std::string uniform_program(int n, uint64_t seed, double& top) {
  Rng rng(seed);
  std::string p = "[assume w (scope_include 'w 0 (gamma 6 2))]";
  top = 0;
  for (int i = 0; i < n; ++i) {
    const double z = 0.1 + 0.9 * rng.uniform(), y = rng.uniform();
    top = std::max(top, y);
    p += fmt::format("[observe (uniform_continuous {} w) {}]", -z, y);
  }
  return p;
}

TEST_CASE("a state of probability zero is left by subsampled_mh at eps = 0 and exact mh, in lockstep") {
  constexpr int kN = 40;
  double top = 0;
  const std::string program = uniform_program(kN, 3, top);
  int warmup = 0;
  test::ThreeWay t(7, program, [&](Engine& e) {
    SubsampledState warm;
    int i = 0;
    for (; i < 2000 && w_of(e) >= top; ++i) subsampled_mh_transition(e.trace(), w_all(), approximate(0.3), warm);
    warmup = i;
    refresh_all(e.trace());  // the engines compare fingerprints: stale values would differ from repaired ones
  });
  CAPTURE(warmup);
  REQUIRE(w_of(t.sub) < top);  // an approximate move accepted a w that a datum rules out
  const test::Lockstep o(3, 0.3);
  int from_zero = 0, left = 0;
  for (int i = 0; i < 200; ++i) {
    CAPTURE(i);
    const bool zero = w_of(t.sub) < top;
    const bool accepted = t.step_same(w_all(), o);
    from_zero += zero ? 1 : 0;
    left += zero && accepted && w_of(t.sub) >= top ? 1 : 0;
  }
  CHECK(from_zero > 0);
  CHECK(left == 1);  // exact moves never go back
  CHECK(w_of(t.sub) >= top);
}

// A stale section can also fail outright under the current value: sqrt of s - c < 0. subsampled_mh then cannot
// repair it before scoring it; it scores it +inf and puts it back as it was (still stale) if the move is rejected.
// Readers other than the kernels still stop with the domain error, leaving the trace as it was.
void check_leaves_failing_sections(const std::string& observation) {
  constexpr int kN = 40;
  std::string program = "[assume s (scope_include 'w 0 (normal 3 0.5))][assume f (lambda (v) (normal v 1))]";
  for (int i = 0; i < kN; ++i)
    program += fmt::format("[assume m{} (sqrt (- s {}))] [observe {} 1]", i, 0.06 * i,
                           fmt::format(fmt::runtime(observation), i));
  const double bound = 0.06 * (kN - 1);  // s below it rules out section kN - 1
  Engine e(5);
  test::run(e, program);
  SubsampledState state;
  int in_zero = 0, failed_reads = 0;
  bool left = false;
  for (int i = 0; i < 2000 && !left; ++i) {
    CAPTURE(i);
    const double before = std::get<double>(e.report("s"));
    const size_t stale_before = stale_count(e);
    const bool zero = before < bound;
    // Never stops with the domain error: a section that fails under the current value scores +inf.
    const bool accepted = subsampled_mh_transition(e.trace(), w_all(), approximate(1.0), state);
    const double s = std::get<double>(e.report("s"));
    if (!accepted) {  // sections it repaired stay repaired; the others are as they were
      REQUIRE(s == before);
      REQUIRE(stale_count(e) <= stale_before);
    }
    in_zero += zero ? 1 : 0;
    left = in_zero > 0 && s >= bound;
    if (s >= bound) continue;
    const std::string now = test::fingerprint_of(e);
    try {
      test::run(e, fmt::format("[predict m{}]", kN - 1));
    } catch (const Error& err) {
      REQUIRE(std::string(err.message()).find("sqrt: argument 1 is -") != std::string::npos);
      REQUIRE(!err.frames().empty());
      CHECK(err.frames().back().text ==
            "while updating a value that subsampled_mh left stale: an approximate move (eps > 0) accepted a "
            "parameter value under which it has probability zero");
      REQUIRE(test::fingerprint_of(e) == now);
      ++failed_reads;
    }
  }
  CHECK(in_zero > 1);
  CHECK(failed_reads > 0);
  REQUIRE(left);
  refresh_all(e.trace());
  CHECK(test::inconsistent_nodes(e) == 0);
}

TEST_CASE("a stale section that fails under the current value is scored +inf and left as it was") {
  SUBCASE("sections evaluated from values alone") { check_leaves_failing_sections("(normal m{} 1)"); }
  SUBCASE("sections evaluated in place") { check_leaves_failing_sections("(normal m{0} (exp (* 0 m{0})))"); }
  SUBCASE("sections with their own scaffold") { check_leaves_failing_sections("(f m{})"); }
}

}  // namespace
}  // namespace vnt::zero_probability_tests
