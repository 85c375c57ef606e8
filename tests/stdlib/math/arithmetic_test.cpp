// Tests for + - * /: n-ary folds, broadcasting of scalars over vectors and matrices, size errors, IEEE division.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>

#include "tests/support/sp_call.hpp"

using namespace vnt;
using namespace vnt::test;

TEST_CASE("arithmetic: numbers, n-ary") {
  CHECK(num(call("+", {})) == 0);
  CHECK(num(call("*", {})) == 1);
  CHECK(num(call("+", {1.0, 2.0, 3.5})) == 6.5);
  CHECK(num(call("*", {2.0, 3.0, 4.0})) == 24);
  CHECK(num(call("-", {5.0})) == -5);
  CHECK(num(call("-", {5.0, 7.0})) == -2);
  CHECK(num(call("/", {1.0, 4.0})) == 0.25);
  CHECK(num(call("+", {true, 1.0})) == 2);  // booleans read as 0/1, like every numeric argument
}

TEST_CASE("arithmetic: broadcasting over vectors and matrices") {
  CHECK(show(call("+", {vec({1, 2}), 1.0})) == "[2 3]");
  CHECK(show(call("+", {1.0, vec({1, 2}), vec({10, 20})})) == "[12 23]");
  CHECK(show(call("*", {2.0, vec({1, 2})})) == "[2 4]");
  CHECK(show(call("*", {vec({1, 2}), vec({3, 4})})) == "[3 8]");  // elementwise, not a dot product
  CHECK(show(call("-", {vec({1, -2})})) == "[-1 2]");
  CHECK(show(call("-", {10.0, vec({1, 2})})) == "[9 8]");
  CHECK(show(call("-", {vec({1, 2}), 10.0})) == "[-9 -8]");
  CHECK(show(call("/", {vec({1, 2}), 2.0})) == "[0.5 1]");
  CHECK(show(call("/", {1.0, vec({2, 4})})) == "[0.5 0.25]");
  CHECK(show(call("*", {mat({{1, 2}, {3, 4}}), 2.0})) == "[[2 4] [6 8]]");
  CHECK(show(call("+", {mat({{1, 2}, {3, 4}}), mat({{1, 1}, {1, 1}})})) == "[[2 3] [4 5]]");
  CHECK(show(call("-", {mat({{1, 2}})})) == "[[-1 -2]]");
  CHECK(show(call("+", {vec({1})})) == "[1]");
  CHECK(show(call("+", {vec({}), vec({})})) == "[]");
}

// IEEE 754 division: no error, infinities and NaN as for doubles.
TEST_CASE("arithmetic: division by zero") {
  CHECK(num(call("/", {1.0, 0.0})) == INFINITY);
  CHECK(num(call("/", {-1.0, 0.0})) == -INFINITY);
  CHECK(std::isnan(num(call("/", {0.0, 0.0}))));
  CHECK(show(call("/", {vec({1, -1}), 0.0})) == "[inf -inf]");
}

TEST_CASE("arithmetic: errors") {
  CHECK(failure("+", {1.0, sym("a")}) ==
        Failure{ErrorKind::kType, "+: argument 2 must be a number, vector or matrix, got a symbol"});
  CHECK(failure("*", {lst({})}) ==
        Failure{ErrorKind::kType, "*: argument 1 must be a number, vector or matrix, got a list"});
  CHECK(failure("-", {str("x")}) ==
        Failure{ErrorKind::kType, "-: argument 1 must be a number, vector or matrix, got a string"});
  CHECK(failure("+", {vec({1, 2}), vec({1, 2, 3})}) ==
        Failure{ErrorKind::kDomain, "+: argument 2 has size 3, but argument 1 has size 2"});
  CHECK(failure("*", {2.0, vec({1, 2}), 3.0, vec({1})}) ==
        Failure{ErrorKind::kDomain, "*: argument 4 has size 1, but argument 2 has size 2"});
  CHECK(failure("+", {mat({{1, 2}}), mat({{1}, {2}})}) ==
        Failure{ErrorKind::kDomain, "+: argument 2 has shape 2x1, but argument 1 has shape 1x2"});
  CHECK(failure("-", {vec({1}), mat({{1}})}) ==
        Failure{ErrorKind::kType, "-: argument 2 must be a vector (to match argument 1), got a matrix"});
  CHECK(failure("-", {}) == Failure{ErrorKind::kArity, "-: expected 1 to 2 arguments, got 0"});
  CHECK(failure("/", {1.0}) == Failure{ErrorKind::kArity, "/: expected 2 arguments, got 1"});
}
