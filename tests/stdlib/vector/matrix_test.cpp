// Tests for the matrix builtins.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "tests/support/sp_call.hpp"

using namespace vnt;
using namespace vnt::test;

TEST_CASE("matrix: construction") {
  CHECK(show(call("matrix", {vec({1, 2}), vec({3, 4})})) == "[[1 2] [3 4]]");
  CHECK(show(call("matrix", {vec({1, 2, 3})})) == "[[1 2 3]]");
  CHECK(show(call("id_matrix", {2.0})) == "[[1 0] [0 1]]");
  CHECK(show(call("diag_matrix", {vec({2, 3})})) == "[[2 0] [0 3]]");
  CHECK(show(call("transpose", {mat({{1, 2, 3}})})) == "[[1] [2] [3]]");
}

TEST_CASE("matrix: products and indexing") {
  Value m = mat({{1, 2}, {3, 4}});
  CHECK(show(call("matrix_mul", {m, mat({{0, 1}, {1, 0}})})) == "[[2 1] [4 3]]");
  CHECK(show(call("matrix_mul", {m, vec({1, 1})})) == "[3 7]");
  CHECK(show(call("matrix_mul", {mat({{1, 2, 3}}), mat({{1}, {1}, {1}})})) == "[[6]]");
  CHECK(show(call("row", {m, 1.0})) == "[3 4]");
  CHECK(show(call("col", {m, 1.0})) == "[2 4]");
  CHECK(num(call("mat_lookup", {m, 1.0, 0.0})) == 3);
}

TEST_CASE("matrix: errors") {
  CHECK(failure("matrix", {vec({1, 2}), vec({3})}) ==
        Failure{ErrorKind::kDomain, "matrix: argument 2 has size 1, but argument 1 has size 2"});
  CHECK(failure("matrix", {vec({1}), lst({})}) ==
        Failure{ErrorKind::kType, "matrix: argument 2 must be a vector, got a list"});
  CHECK(failure("matrix_mul", {mat({{1, 2}}), vec({1, 2, 3})}) ==
        Failure{ErrorKind::kDomain, "matrix_mul: argument 2 has size 3, but argument 1 has 2 columns"});
  CHECK(failure("matrix_mul", {mat({{1, 2}}), mat({{1, 2}})}) ==
        Failure{ErrorKind::kDomain, "matrix_mul: argument 2 has 1 rows, but argument 1 has 2 columns"});
  CHECK(failure("matrix_mul", {mat({{1}}), 2.0}) ==
        Failure{ErrorKind::kType, "matrix_mul: argument 2 must be a matrix or vector, got a number"});
  CHECK(failure("row", {mat({{1, 2}}), 1.0}) ==
        Failure{ErrorKind::kDomain, "row: index 1 is out of range for a matrix with 1 rows"});
  CHECK(failure("col", {mat({{1, 2}}), 2.0}) ==
        Failure{ErrorKind::kDomain, "col: index 2 is out of range for a matrix with 2 columns"});
  CHECK(failure("mat_lookup", {mat({{1, 2}}), 0.0, 5.0}) ==
        Failure{ErrorKind::kDomain, "mat_lookup: index 5 is out of range for a matrix with 2 columns"});
  CHECK(failure("transpose", {vec({1})}) ==
        Failure{ErrorKind::kType, "transpose: argument 1 must be a matrix, got a vector"});
  CHECK(failure("id_matrix", {1.5}) ==
        Failure{ErrorKind::kDomain, "id_matrix: argument 1 is 1.5, but must be a non-negative integer"});
  CHECK(failure("id_matrix", {1e6}) ==
        Failure{ErrorKind::kDomain, "id_matrix: argument 1 is 1000000, but must be at most 10000"});
}

TEST_CASE("matrix: results too large to allocate are errors before any allocation") {
  // (diag_matrix (zeros 100000)) would be 80 GB, an outer product of two 50000-vectors 20 GB.
  CHECK(failure("diag_matrix", {make_vector(Eigen::VectorXd::Zero(10'001))}) ==
        Failure{ErrorKind::kDomain, "diag_matrix: argument 1 has 10001 elements, but must have at most 10000"});
  Value column = make_matrix(Eigen::MatrixXd::Ones(20'000, 1));
  Value line = make_matrix(Eigen::MatrixXd::Ones(1, 20'000));
  CHECK(failure("matrix_mul", {column, line}) ==
        Failure{ErrorKind::kDomain,
                "matrix_mul: the product would be 20000x20000, but a matrix must have at most 100000000 elements"});
  CHECK(num(call("mat_lookup", {call("matrix_mul", {line, column}), 0.0, 0.0})) == 20000);
  // 1001 rows of 1e5: each row is allowed, the matrix of 1.001e8 elements is not.
  Value row = make_vector(Eigen::VectorXd::Zero(100'000));
  CHECK(failure("matrix", std::vector<Value>(1001, row)) ==
        Failure{ErrorKind::kDomain,
                "matrix: the matrix would be 1001x100000, but a matrix must have at most 100000000 elements"});
}
