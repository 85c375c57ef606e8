// Tests for the elementary functions: values, elementwise use, domains, and stability of logistic/logsumexp.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>

#include "tests/support/sp_call.hpp"

using namespace vnt;
using namespace vnt::test;

TEST_CASE("elementary: scalar values") {
  CHECK(num(call("exp", {0.0})) == 1);
  CHECK(num(call("log", {1.0})) == 0);
  CHECK(num(call("log", {0.0})) == -INFINITY);
  CHECK(num(call("sqrt", {9.0})) == 3);
  CHECK(num(call("abs", {-2.5})) == 2.5);
  CHECK(num(call("log1p", {1e-20})) == 1e-20);
  CHECK(num(call("log1p", {-1.0})) == -INFINITY);
  CHECK(num(call("expm1", {1e-20})) == 1e-20);
  CHECK(num(call("floor", {-1.5})) == -2);
  CHECK(num(call("ceil", {-1.5})) == -1);
  CHECK(num(call("round", {2.5})) == 3);
  CHECK(num(call("round", {-2.5})) == -3);
  CHECK(num(call("pow", {2.0, 10.0})) == 1024);
  CHECK(num(call("pow", {-2.0, 3.0})) == -8);
  CHECK(num(call("sin", {0.0})) == 0);
  CHECK(num(call("cos", {0.0})) == 1);
  CHECK(num(call("tan", {0.0})) == 0);
  CHECK(num(call("atan2", {1.0, 1.0})) == doctest::Approx(std::atan(1.0)));
  CHECK(num(call("min", {3.0, 1.0, 2.0})) == 1);
  CHECK(num(call("max", {3.0, 1.0, 2.0})) == 3);
  CHECK(num(call("max", {vec({-1, 4, 2})})) == 4);
  CHECK(num(call("min", {7.0})) == 7);
  CHECK(std::isnan(num(call("max", {1.0, NAN, 2.0}))));
}

TEST_CASE("elementary: elementwise on vectors and matrices") {
  CHECK(show(call("exp", {vec({0, 0})})) == "[1 1]");
  CHECK(show(call("log", {vec({1, 0})})) == "[0 -inf]");
  CHECK(show(call("sqrt", {vec({4, 9})})) == "[2 3]");
  CHECK(show(call("abs", {vec({-1, 2})})) == "[1 2]");
  CHECK(show(call("abs", {mat({{-1, 2}, {3, -4}})})) == "[[1 2] [3 4]]");
  CHECK(show(call("logistic", {vec({-1000, 0, 1000})})) == "[0 0.5 1]");
}

// logistic must neither overflow (NaN from inf/inf) nor lose the tail where a double can still represent it.
TEST_CASE("elementary: logistic and logit are stable in both tails") {
  CHECK(num(call("logistic", {1000.0})) == 1);
  CHECK(num(call("logistic", {-1000.0})) == 0);
  CHECK(num(call("logistic", {0.0})) == 0.5);
  double tiny = num(call("logistic", {-700.0}));
  CHECK(tiny > 0);
  CHECK(std::log(tiny) == doctest::Approx(-700.0));
  CHECK(num(call("logistic", {-30.0})) == doctest::Approx(std::exp(-30.0)).epsilon(1e-12));
  CHECK(num(call("logit", {0.0})) == -INFINITY);
  CHECK(num(call("logit", {1.0})) == INFINITY);
  CHECK(num(call("logit", {0.5})) == 0);
  CHECK(num(call("logit", {call("logistic", {3.0})})) == doctest::Approx(3.0));
  CHECK(num(call("logit", {1e-300})) == doctest::Approx(std::log(1e-300)));
}

TEST_CASE("elementary: logsumexp") {
  CHECK(num(call("logsumexp", {1000.0, 1000.0})) == doctest::Approx(1000.0 + std::log(2.0)));
  CHECK(num(call("logsumexp", {vec({-1000, -1000})})) == doctest::Approx(-1000.0 + std::log(2.0)));
  CHECK(num(call("logsumexp", {0.0})) == 0);
  // The terms below the maximum keep their relative accuracy (log of 1 + e^-40 rounded to 0).
  CHECK(num(call("logsumexp", {0.0, -40.0})) == doctest::Approx(std::exp(-40.0)).epsilon(1e-12));
  CHECK(num(call("logsumexp", {-40.0, 0.0, -40.0})) == doctest::Approx(2 * std::exp(-40.0)).epsilon(1e-12));
  CHECK(num(call("logsumexp", {-INFINITY, -INFINITY})) == -INFINITY);
  CHECK(num(call("logsumexp", {vec({})})) == -INFINITY);
  CHECK(num(call("logsumexp", {INFINITY, 1.0})) == INFINITY);
  CHECK(num(call("logsumexp", {INFINITY, -INFINITY})) == INFINITY);
  CHECK(num(call("logsumexp", {vec({-INFINITY, 0, INFINITY})})) == INFINITY);
  CHECK(std::isnan(num(call("logsumexp", {INFINITY, NAN}))));
}

TEST_CASE("elementary: errors") {
  CHECK(failure("log", {-1.0}) == Failure{ErrorKind::kDomain, "log: argument 1 is -1, but must be non-negative"});
  CHECK(failure("log", {vec({1, -2})}) ==
        Failure{ErrorKind::kDomain, "log: argument 1 at index 1 is -2, but must be non-negative"});
  CHECK(failure("sqrt", {mat({{1, 2}, {-1, 4}})}) ==
        Failure{ErrorKind::kDomain, "sqrt: argument 1 at index (1, 0) is -1, but must be non-negative"});
  CHECK(failure("log1p", {-2.0}) == Failure{ErrorKind::kDomain, "log1p: argument 1 is -2, but must be at least -1"});
  CHECK(failure("logit", {1.5}) == Failure{ErrorKind::kDomain, "logit: argument 1 is 1.5, but must be in [0, 1]"});
  CHECK(failure("pow", {-8.0, 0.5}) ==
        Failure{ErrorKind::kDomain, "pow: argument 2 is 0.5, but must be an integer when argument 1 (-8) is negative"});
  CHECK(failure("exp", {lst({})}) ==
        Failure{ErrorKind::kType, "exp: argument 1 must be a number, vector or matrix, got a list"});
  CHECK(failure("atan2", {1.0, sym("x")}) ==
        Failure{ErrorKind::kType, "atan2: argument 2 must be a number, got a symbol"});
  CHECK(failure("min", {1.0, vec({1})}) == Failure{ErrorKind::kType, "min: argument 2 must be a number, got a vector"});
  CHECK(failure("max", {sym("a")}) ==
        Failure{ErrorKind::kType, "max: argument 1 must be a number or a vector, got a symbol"});
  CHECK(failure("max", {vec({})}) == Failure{ErrorKind::kDomain, "max: argument 1 is [], but must be non-empty"});
  CHECK(failure("max", {}) == Failure{ErrorKind::kArity, "max: expected at least 1 argument, got 0"});
}
