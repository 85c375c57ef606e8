// Tests for the list builtins.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "tests/support/sp_call.hpp"

using namespace vnt;
using namespace vnt::test;

TEST_CASE("list: construction and access") {
  Value l = call("list", {1.0, sym("a"), vec({2})});
  CHECK(show(l) == "(1 a [2])");
  CHECK(show(call("list", {})) == "()");
  CHECK(num(call("first", {l})) == 1);
  CHECK(show(call("second", {l})) == "a");
  CHECK(show(call("rest", {l})) == "(a [2])");
  CHECK(show(call("rest", {lst({1.0})})) == "()");
  CHECK(show(call("pair", {0.0, l})) == "(0 1 a [2])");
  CHECK(show(call("cons", {0.0, lst({})})) == "(0)");
  CHECK(boolean(call("is_empty", {lst({})})));
  CHECK_FALSE(boolean(call("is_empty", {l})));
  CHECK(boolean(call("is_empty", {vec({})})));
}

TEST_CASE("list: errors") {
  CHECK(failure("first", {lst({})}) ==
        Failure{ErrorKind::kDomain, "first: argument 1 is (), but must be a non-empty list"});
  CHECK(failure("rest", {lst({})}) ==
        Failure{ErrorKind::kDomain, "rest: argument 1 is (), but must be a non-empty list"});
  CHECK(failure("second", {lst({1.0})}) ==
        Failure{ErrorKind::kDomain, "second: argument 1 is (1), but must have at least 2 items"});
  CHECK(failure("first", {vec({1})}) == Failure{ErrorKind::kType, "first: argument 1 must be a list, got a vector"});
  CHECK(failure("pair", {1.0, 2.0}) == Failure{ErrorKind::kType, "pair: argument 2 must be a list, got a number"});
  CHECK(failure("is_empty", {1.0}) ==
        Failure{ErrorKind::kType, "is_empty: argument 1 must be a list or vector, got a number"});
}
