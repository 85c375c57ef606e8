// A local section of one border applies a procedure that a stale section of another border computes: repairing it
// may change that procedure, and with it the section's shape, in the middle of a transition.
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

namespace vnt {
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
  SubsampledOptions so;
  so.batch = 2;
  so.epsilon = 0.3;
  so.drift_sigma = 0.01;  // small steps: most w moves are accepted
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

}  // namespace
}  // namespace vnt
