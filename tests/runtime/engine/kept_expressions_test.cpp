// A long session of calls that leave nothing behind does not grow: the expressions of samples, of inference
// programs' collects, of failed directives and of forgotten ones are dropped, while those of live assume, observe
// and predict directives are kept (an observe's value expression only while it is read).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "runtime/engine/engine.hpp"
#include "tests/support/engine_fixture.hpp"

namespace vnt::kept_expressions_tests {
namespace {

TEST_CASE("samples, collects and failed directives keep no expression, assume, observe and predict do") {
  Engine e(3);
  test::run(e, "[assume mu (normal 0 1)] [observe (normal mu 1) 0.5]");
  const size_t base = e.kept_expressions();
  for (int i = 0; i < 50; ++i) {
    test::run(e, "[sample (+ mu (normal 0 1))]");
    test::run(e, "[infer (repeat 2 (do (mh default one 1) (collect mu (* 2 mu))))]");
    CHECK_THROWS_AS(test::run(e, "[predict (normal mu -1)]"), Error);
    CHECK_THROWS_AS(test::run(e, "[sample (nosuch)]"), Error);
    CHECK_THROWS_AS(test::run(e, "[observe (normal mu 1) (nosuch)]"), Error);
  }
  CHECK(e.kept_expressions() == base);
  CHECK(e.draws().rows() == 100);
  test::run(e, "[predict (* 3 mu)]");
  CHECK(e.kept_expressions() == base + 1);
  // The value of a sample is printed before its expression goes: a procedure it made can still be shown.
  std::string printed;
  e.set_output([&](const Value& v, const Directive&) { printed = to_string(v); });
  test::run(e, "[sample (lambda (x) x)]");
  CHECK(printed == "<procedure lambda>");
  CHECK(e.kept_expressions() == base + 1);
}

TEST_CASE("a forgotten directive's expression is freed, and an observe keeps its expression but not its value's") {
  Engine e(5);
  test::run(e, "[assume mu (normal 0 1)]");
  const size_t base = e.kept_expressions();
  for (int i = 0; i < 50; ++i) {
    test::run(e, "p: [predict (+ mu 1)] o: [observe (normal mu 1) (+ 0.25 0.25)] [forget p] [forget o]");
    test::run(e, "[assume f (lambda (x) (* x mu))] fp: [predict (f 2)] [forget fp] [forget f]");
  }
  CHECK(e.kept_expressions() == base);
  test::run(e, "[observe (normal mu 1) 0.5]");
  CHECK(e.kept_expressions() == base + 1);
  // The names a live directive reads are still known after others were freed: forget still refuses.
  test::run(e, "[assume g (lambda () mu)] q: [predict (g)]");
  const Error err = [&] {
    try {
      test::run(e, "[forget g]");
    } catch (const Error& x) {
      return x;
    }
    FAIL("forget g should fail");
    return Error(ErrorKind::kInternal, "");
  }();
  CHECK(err.message() == "forget: 'g' is still used by other directives (test.vnt:1:40 reads it)");
}

TEST_CASE("observe_apply keeps one expression per procedure, and none for a call that fails") {
  Engine e(7);
  test::run(e, "[assume y_x (lambda (x) (normal (* 2 x) 1))]");
  const size_t base = e.kept_expressions();
  for (int i = 0; i < 50; ++i) {
    e.observe_apply("y_x", {Value(0.1 * i)}, Value(0.2 * i));
    CHECK_THROWS_AS(e.observe_apply("nosuch" + std::to_string(i), {Value(1.0)}, Value(1.0)), Error);
  }
  CHECK(e.kept_expressions() == base + 1);
}

}  // namespace
}  // namespace vnt::kept_expressions_tests
