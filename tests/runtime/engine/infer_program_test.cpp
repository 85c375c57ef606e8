// How an inference program meets the rest of the session: the errors it stops with say which kernel and what is
// kept; checking it draws nothing; a {param} in a collect expression is a string, as anywhere else.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "runtime/core/diagnostics.hpp"
#include "runtime/engine/engine.hpp"
#include "tests/support/engine_fixture.hpp"

namespace vnt::infer_program_tests {
namespace {

Error error_of(Engine& e, const std::string& program) {
  try {
    test::run(e, program);
  } catch (const Error& err) {
    return err;
  }
  FAIL("expected an error from " << program);
  return Error(ErrorKind::kInternal, "");
}

TEST_CASE("an error met by a transition names the kernel that made it and what it keeps") {
  Engine e(3);
  test::run(e, "[assume k (flip 0.5)] [assume f (if k flip not)] [observe (f 0.7) true]");
  // k starts true; with k false the observed application would be deterministic.
  const Error err = error_of(e, "[infer (repeat 10 (mh default one 1))]");
  CHECK(span_location(err.span()) == "test.vnt:1:59");  // the observation, as before
  REQUIRE(err.frames().size() == 1);
  CHECK(err.frames()[0].text == "while running mh default one at test.vnt:1:19 (it had made no transition yet)");

  // With another choice, which moves freely, the kernel has made transitions when it first picks k.
  Engine f(3);
  test::run(f, "[assume x (normal 0 1)] [assume k (flip 0.5)] [assume f (if k flip not)] [observe (f 0.7) true]");
  const Error later = error_of(f, "[infer (mh default one 100)]");
  REQUIRE(later.frames().size() == 1);
  CHECK(later.frames()[0].text == "while running mh default one at test.vnt:1:8 (the 7 transitions it had made are kept)");
}

// A collect that fails part-way says so as a kernel does (its error had only the expression's location); one
// that fails the check before any move has no such line.
TEST_CASE("an error met by a collect after moves names the collect and what is kept") {
  Engine e(2);  // m starts positive, and the first move makes it negative
  test::run(e, "[assume m (normal 0 1)]");
  const Error err = error_of(e, "[infer (repeat 100 (do (mh default one 1) (collect (sqrt m))))]");
  CHECK(span_location(err.span()) == "test.vnt:1:52");
  REQUIRE(err.frames().size() == 1);
  CHECK(err.frames()[0].text == "while running collect at test.vnt:1:43 (the transitions made before it are kept)");
  const Error first = error_of(e, "[infer (repeat 100 (do (mh default one 1) (collect (sqrt m))))]");
  CHECK(first.frames().empty());  // m is negative now: the check before any move fails
}

TEST_CASE("an [infer] that makes no move leaves the random stream as it was, collect expressions and all") {
  auto x_after = [](bool no_op) {
    Engine e(1);
    test::run(e, "[assume x (normal 0 1)] [observe (normal x 1) 0.3]");
    if (no_op) test::run(e, "[infer (repeat 0 (collect (normal 0 1) x))]");
    test::run(e, "[infer (mh default one 5)]");
    return test::sample_number(e, "x");
  };
  CHECK(x_after(true) == x_after(false));
}

TEST_CASE("a {param} in a collect expression is a string, as in any expression") {
  Engine e(1);
  e.set_params({{"name", "abc"}});
  test::run(e, "[infer (collect (size {name}))]");
  REQUIRE(e.draws().columns() == std::vector<std::string>{"(size {name})"});
  CHECK(e.draws().column(0) == std::vector<double>{3});
}

}  // namespace
}  // namespace vnt::infer_program_tests
