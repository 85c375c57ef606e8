// A rejected MH proposal restores the trace exactly: structure, values, request counts, registrations, aux.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "runtime/infer/mh.hpp"
#include "tests/support/engine_fixture.hpp"

namespace vnt::mh_restore_tests {
namespace {

void check_reject_restores(const std::string& program, const BlockSpec& spec, MhOptions opts, int rounds) {
  Engine e(7);
  test::run(e, program);
  opts.decision = MhOptions::Decision::kReject;
  for (int i = 0; i < rounds; ++i) {
    std::string before = test::fingerprint_of(e);
    size_t nodes = e.trace().live_nodes();
    mh_transition(e.trace(), spec, opts);
    CHECK(test::fingerprint_of(e) == before);
    CHECK(e.trace().live_nodes() == nodes);
    // Move somewhere else, so later rejections start from different states.
    MhOptions acc = opts;
    acc.decision = MhOptions::Decision::kAccept;
    mh_transition(e.trace(), spec, acc);
  }
}

BlockSpec spec(std::string scope, BlockSpec::Mode mode = BlockSpec::Mode::kOne) {
  BlockSpec s;
  s.scope = std::move(scope);
  s.mode = mode;
  s.kernel = std::string("mh");
  return s;
}

TEST_CASE("rejected resimulation restores a trace with brush (the Fig. 1 program)") {
  check_reject_restores(
      "[assume b (bernoulli 0.5)] [assume mu (if b 1 (gamma 1 1))] [assume y (normal mu 0.1)] [observe y 1.0]"
      "[predict (+ mu 1)]",
      spec("default"), {}, 40);
}

TEST_CASE("rejected moves restore compound procedures, mem families and observations") {
  check_reject_restores(
      "[assume s (gamma 2 2)]"
      "[assume f (mem (lambda (i) (normal 0 s)))]"
      "[assume g (lambda (i) (normal (f i) 1))]"
      "[observe (g 1) 0.5] [observe (g 2) -0.3] [observe (g 1) 0.1]"
      "[assume k (categorical (vector 0.2 0.3 0.5))]"
      "[predict (f k)]",
      spec("default"), {}, 60);
}

TEST_CASE("rejected moves restore the auxiliary state of a collapsed coin") {
  check_reject_restores(
      "[assume coin (make_beta_bernoulli 1 1)]"
      "[assume flips (mem (lambda (i) (coin)))]"
      "[observe (flips 1) true] [observe (flips 2) true]"
      "[predict (flips 3)] [predict (flips 4)] [predict (flips 5)]",
      spec("default"), {}, 30);
}

TEST_CASE("rejected moves restore observations taken from one collapsed coin to another") {
  check_reject_restores(
      "[assume crp (make_crp 1)]"
      "[assume z (mem (lambda (i) (crp)))]"
      "[assume coins (mem (lambda (k) (make_beta_bernoulli 1 1)))]"
      "[observe ((coins (z 1))) true] [observe ((coins (z 2))) false] [observe ((coins (z 3))) true]"
      "[predict ((coins (z 1)))]",
      spec("default"), {}, 40);
}

TEST_CASE("rejected drift on a block of all choices restores the trace") {
  check_reject_restores(
      "[assume w (scope_include 'w 0 (multivariate_normal (vector 0 0) (id_matrix 2)))]"
      "[assume b (scope_include 'w 0 (normal 0 1))]"
      "[assume y (lambda (x) (bernoulli (linear_logistic w x)))]"
      "[observe (y (vector 1 2)) 1] [observe (y (vector -1 0.5)) 0] [observe (normal b 1) 0.3]",
      spec("w", BlockSpec::Mode::kAll), MhOptions{0.3}, 30);
}

TEST_CASE("an accepted move followed by an exact reverse restores nothing extra: node count is stable") {
  Engine e(3);
  test::run(e, "[assume b (flip 0.5)] [assume x (if b (normal 0 1) (let ((z (normal 5 1))) (* z 2)))]");
  size_t lo = e.trace().live_nodes(), hi = lo;
  for (int i = 0; i < 200; ++i) {
    mh_transition(e.trace(), spec("default"), {});
    lo = std::min(lo, e.trace().live_nodes());
    hi = std::max(hi, e.trace().live_nodes());
  }
  // Two shapes of trace only (one per branch): no leaked or duplicated nodes over many moves.
  CHECK(hi - lo <= 8);
}

}  // namespace
}  // namespace vnt::mh_restore_tests
