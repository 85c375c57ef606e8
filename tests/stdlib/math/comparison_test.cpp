// Tests for = and != (structural) and the numeric orderings.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "tests/support/sp_call.hpp"

using namespace vnt;
using namespace vnt::test;

TEST_CASE("comparison: structural equality") {
  CHECK(boolean(call("=", {1.0, 1.0})));
  CHECK_FALSE(boolean(call("=", {1.0, 2.0})));
  CHECK(boolean(call("=", {sym("a"), sym("a")})));
  CHECK(boolean(call("=", {vec({1, 2}), vec({1, 2})})));
  CHECK_FALSE(boolean(call("=", {vec({1, 2}), vec({1, 2, 3})})));
  CHECK(boolean(call("=", {lst({1.0, str("x")}), lst({1.0, str("x")})})));
  CHECK_FALSE(boolean(call("=", {true, 1.0})));  // different kinds are never equal
  CHECK(boolean(call("!=", {1.0, 2.0})));
  CHECK_FALSE(boolean(call("!=", {sym("a"), sym("a")})));
}

TEST_CASE("comparison: orderings") {
  CHECK(boolean(call("<", {1.0, 2.0})));
  CHECK_FALSE(boolean(call("<", {2.0, 2.0})));
  CHECK(boolean(call("<=", {2.0, 2.0})));
  CHECK(boolean(call(">", {3.0, 2.0})));
  CHECK_FALSE(boolean(call(">=", {1.0, 2.0})));
  CHECK_FALSE(boolean(call("<", {NAN, 1.0})));
}

TEST_CASE("comparison: errors") {
  CHECK(failure("<", {1.0, sym("a")}) == Failure{ErrorKind::kType, "<: argument 2 must be a number, got a symbol"});
  CHECK(failure(">=", {vec({1}), 1.0}) == Failure{ErrorKind::kType, ">=: argument 1 must be a number, got a vector"});
  CHECK(failure("=", {1.0}) == Failure{ErrorKind::kArity, "=: expected 2 arguments, got 1"});
}
