// Tests for the vector builtins: construction, lookup, size, dot, sums, ranges, append and concat.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>

#include "tests/support/sp_call.hpp"

using namespace vnt;
using namespace vnt::test;

TEST_CASE("vector: construction and shape") {
  CHECK(show(call("vector", {1.0, 2.5, -3.0})) == "[1 2.5 -3]");
  CHECK(show(call("vector", {})) == "[]");
  CHECK(num(call("size", {vec({1, 2, 3})})) == 3);
  CHECK(num(call("size", {lst({1.0, sym("a")})})) == 2);
  CHECK(num(call("size", {str("abcd")})) == 4);
  CHECK(show(call("zeros", {3.0})) == "[0 0 0]");
  CHECK(show(call("ones", {2.0})) == "[1 1]");
  CHECK(show(call("zeros", {0.0})) == "[]");
  CHECK(show(call("linspace", {0.0, 1.0, 5.0})) == "[0 0.25 0.5 0.75 1]");
  CHECK(show(call("linspace", {2.0, 3.0, 1.0})) == "[2]");
  CHECK(show(call("linspace", {2.0, 3.0, 0.0})) == "[]");
  // Ends whose difference or its multiples overflow (the points used to be inf and NaN), and infinite ends.
  CHECK(show(call("linspace", {-1e308, 1e308, 3.0})) == "[-1e+308 0 1e+308]");
  CHECK(show(call("linspace", {0.0, 1e308, 5.0})) == "[0 2.5e+307 5e+307 7.5e+307 1e+308]");
  CHECK(show(call("linspace", {0.0, INFINITY, 3.0})) == "[0 inf inf]");
  // An infinite or NaN first end: std::lerp gave the last end inside ([inf 1 1], [nan 1 1]).
  CHECK(show(call("linspace", {INFINITY, 1.0, 3.0})) == "[inf inf 1]");
  CHECK(show(call("linspace", {-INFINITY, INFINITY, 3.0})) == "[-inf nan inf]");
  CHECK(show(call("linspace", {-INFINITY, -INFINITY, 3.0})) == "[-inf -inf -inf]");
  CHECK(show(call("linspace", {NAN, 1.0, 3.0})) == "[nan nan 1]");
  CHECK(show(call("linspace", {0.0, NAN, 3.0})) == "[0 nan nan]");
}

TEST_CASE("vector: lookup is 0-based on vectors, lists and matrix rows") {
  CHECK(num(call("lookup", {vec({10, 20, 30}), 2.0})) == 30);
  CHECK(show(call("lookup", {lst({sym("a"), sym("b")}), 1.0})) == "b");
  CHECK(show(call("lookup", {mat({{1, 2}, {3, 4}}), 1.0})) == "[3 4]");
}

TEST_CASE("vector: reductions") {
  CHECK(num(call("mean", {vec({1e308, 1.5e308})})) == 1.25e308);  // the sum overflows (was inf)
  CHECK(num(call("mean", {vec({INFINITY, 1})})) == INFINITY);
  CHECK(num(call("dot", {vec({1, 2, 3}), vec({4, 5, 6})})) == 32);
  CHECK(num(call("dot", {vec({}), vec({})})) == 0);
  CHECK(num(call("sum", {vec({1, 2, 3.5})})) == 6.5);
  CHECK(num(call("sum", {vec({})})) == 0);
  CHECK(num(call("mean", {vec({1, 2, 6})})) == 3);
}

TEST_CASE("vector: append and concat") {
  CHECK(show(call("append", {vec({1, 2}), 3.0})) == "[1 2 3]");
  CHECK(show(call("append", {vec({}), 3.0})) == "[3]");
  CHECK(show(call("append", {lst({1.0}), sym("x")})) == "(1 x)");
  CHECK(show(call("concat", {vec({1}), vec({}), vec({2, 3})})) == "[1 2 3]");
  CHECK(show(call("cat", {vec({1}), vec({2})})) == "[1 2]");
  CHECK(show(call("concat", {})) == "[]");
  CHECK(show(call("concat", {lst({1.0}), lst({2.0, 3.0})})) == "(1 2 3)");
}

TEST_CASE("vector: concat of operands that are allowed alone is an error when the result is too large") {
  Value big = make_vector(Eigen::VectorXd::Zero(100'000));
  CHECK(failure("concat", std::vector<Value>(1001, big)) ==
        Failure{ErrorKind::kDomain,
                "concat: the result would have 100100000 elements, but must have at most 100000000"});
  Value items = lst(std::vector<Value>(100'000, Value(1.0)));
  CHECK(failure("concat", std::vector<Value>(1001, items)) ==
        Failure{ErrorKind::kDomain,
                "concat: the result would have 100100000 elements, but must have at most 100000000"});
}

TEST_CASE("vector: errors") {
  CHECK(failure("lookup", {vec({1, 2}), 3.0}) ==
        Failure{ErrorKind::kDomain, "lookup: index 3 is out of range for a vector of size 2"});
  CHECK(failure("lookup", {lst({}), 0.0}) ==
        Failure{ErrorKind::kDomain, "lookup: index 0 is out of range for a list of size 0"});
  CHECK(failure("lookup", {mat({{1, 2}}), 1.0}) ==
        Failure{ErrorKind::kDomain, "lookup: index 1 is out of range for a matrix with 1 rows"});
  CHECK(failure("lookup", {vec({1, 2}), 0.5}) ==
        Failure{ErrorKind::kDomain, "lookup: argument 2 is 0.5, but must be a non-negative integer"});
  CHECK(failure("lookup", {vec({1, 2}), -1.0}) ==
        Failure{ErrorKind::kDomain, "lookup: argument 2 is -1, but must be a non-negative integer"});
  CHECK(failure("lookup", {vec({1, 2}), sym("i")}) ==
        Failure{ErrorKind::kType, "lookup: argument 2 must be a number, got a symbol"});
  CHECK(failure("lookup", {1.0, 0.0}) ==
        Failure{ErrorKind::kType, "lookup: argument 1 must be a vector, list or matrix, got a number"});
  CHECK(failure("vector", {1.0, sym("a")}) ==
        Failure{ErrorKind::kType, "vector: argument 2 must be a number, got a symbol"});
  CHECK(failure("size", {mat({{1}})}) ==
        Failure{ErrorKind::kType, "size: argument 1 must be a vector, list or string, got a matrix"});
  CHECK(failure("dot", {vec({1, 2}), vec({1, 2, 3})}) ==
        Failure{ErrorKind::kDomain, "dot: argument 2 has size 3, but argument 1 has size 2"});
  CHECK(failure("mean", {vec({})}) == Failure{ErrorKind::kDomain, "mean: argument 1 is [], but must be non-empty"});
  CHECK(failure("zeros", {-1.0}) ==
        Failure{ErrorKind::kDomain, "zeros: argument 1 is -1, but must be a non-negative integer"});
  // Sizes past 1e8 elements are errors, not allocations that fail (or succeed and get the process killed).
  CHECK(failure("zeros", {1e12}) ==
        Failure{ErrorKind::kDomain, "zeros: argument 1 is 1000000000000, but must be at most 100000000"});
  CHECK(failure("ones", {1e8 + 1}) ==
        Failure{ErrorKind::kDomain, "ones: argument 1 is 100000001, but must be at most 100000000"});
  CHECK(failure("linspace", {0.0, 1.0, 1e12}) ==
        Failure{ErrorKind::kDomain, "linspace: argument 3 is 1000000000000, but must be at most 100000000"});
  CHECK(failure("append", {vec({1}), vec({2})}) ==
        Failure{ErrorKind::kType, "append: argument 2 must be a number, got a vector"});
  CHECK(failure("concat", {vec({1}), lst({})}) ==
        Failure{ErrorKind::kType, "concat: argument 2 must be a vector, got a list"});
  CHECK(failure("sum", {lst({})}) == Failure{ErrorKind::kType, "sum: argument 1 must be a vector, got a list"});
}
