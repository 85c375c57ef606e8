// Tests for not/and/or/xor over truthiness.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "tests/support/sp_call.hpp"

using namespace vnt;
using namespace vnt::test;

TEST_CASE("logic: truthiness and results") {
  CHECK(boolean(call("not", {false})));
  CHECK(boolean(call("not", {0.0})));
  CHECK(boolean(call("not", {make_nil()})));
  CHECK_FALSE(boolean(call("not", {sym("a")})));
  CHECK(boolean(call("and", {})));
  CHECK(boolean(call("and", {1.0, true, lst({})})));
  CHECK_FALSE(boolean(call("and", {1.0, 0.0})));
  CHECK_FALSE(boolean(call("or", {})));
  CHECK(boolean(call("or", {false, make_nil(), 2.0})));
  CHECK_FALSE(boolean(call("or", {false, 0.0})));
  CHECK(boolean(call("xor", {true, false})));
  CHECK_FALSE(boolean(call("xor", {true, 1.0})));
  CHECK(boolean(call("xor", {true, true, true})));  // parity
}

TEST_CASE("logic: errors") {
  CHECK(failure("not", {}) == Failure{ErrorKind::kArity, "not: expected 1 argument, got 0"});
  CHECK(failure("xor", {true}) == Failure{ErrorKind::kArity, "xor: expected at least 2 arguments, got 1"});
}
