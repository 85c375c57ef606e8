// Tests for linear_logistic: the size rule (plain dot or leading bias), stability at ±1000, size errors.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>

#include "tests/support/sp_call.hpp"

using namespace vnt;
using namespace vnt::test;

TEST_CASE("linear_logistic: plain dot and bias") {
  CHECK(num(call("linear_logistic", {vec({1, -1}), vec({2, 2})})) == 0.5);
  CHECK(num(call("linear_logistic", {vec({2, 1, -1}), vec({3, 1})})) == doctest::Approx(1 / (1 + std::exp(-4.0))));
  CHECK(num(call("linear_logistic", {vec({0.5}), vec({})})) == doctest::Approx(1 / (1 + std::exp(-0.5))));
}

TEST_CASE("linear_logistic: stable at a linear predictor of +-1000") {
  double hi = num(call("linear_logistic", {vec({10, 10}), vec({50, 50})}));
  double lo = num(call("linear_logistic", {vec({-1000, 1}), vec({0})}));
  CHECK(hi == 1);
  CHECK(lo == 0);
  CHECK(std::isfinite(std::log(hi)));
  double tail = num(call("linear_logistic", {vec({-700}), vec({})}));
  CHECK(std::log(tail) == doctest::Approx(-700.0));
}

TEST_CASE("linear_logistic: errors") {
  CHECK(failure("linear_logistic", {vec({1, 2, 3, 4}), vec({1, 2})}) ==
        Failure{ErrorKind::kDomain,
                "linear_logistic: argument 1 has size 4, but argument 2 has size 2 (argument 1 must have the same "
                "size, or one more for a bias)"});
  CHECK(failure("linear_logistic", {vec({1}), vec({1, 2})}) ==
        Failure{ErrorKind::kDomain,
                "linear_logistic: argument 1 has size 1, but argument 2 has size 2 (argument 1 must have the same "
                "size, or one more for a bias)"});
  CHECK(failure("linear_logistic", {vec({1}), 1.0}) ==
        Failure{ErrorKind::kType, "linear_logistic: argument 2 must be a vector, got a number"});
}

TEST_CASE("linear_logistic: its log-odds are the linear predictor, exact where the probability has rounded") {
  const Value* bound = deterministic_builtins().find("linear_logistic");
  REQUIRE(bound != nullptr);
  const Sp& sp = dynamic_cast<const SpProcedure&>(*std::get<ProcPtr>(*bound)).sp();
  Value w = vec({2, 10}), x = vec({5});
  const Value* ptrs[] = {&w, &x};
  Rng rng(1);
  CHECK(num(sp.simulate(Args(ptrs), rng)) == 1.0);
  REQUIRE(sp.log_odds(Args(ptrs)).has_value());
  CHECK(*sp.log_odds(Args(ptrs)) == 52.0);
  Value bad = vec({1, 2, 3});
  const Value* wrong[] = {&bad, &x};
  CHECK_THROWS_AS(sp.log_odds(Args(wrong)), Error);
}
