// Tests for the named constants.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "runtime/value/value.hpp"
#include "tests/support/sp_call.hpp"

using namespace vnt;
using namespace vnt::test;

TEST_CASE("constants: pi and e") {
  const Value* pi = deterministic_builtins().find("pi");
  const Value* e = deterministic_builtins().find("e");
  REQUIRE(pi != nullptr);
  REQUIRE(e != nullptr);
  CHECK(num(*pi) == std::acos(-1.0));
  CHECK(num(*e) == std::exp(1.0));
}

// Values print inf, -inf and nan, and a printed number is meant to read back; these names were unbound.
TEST_CASE("constants: inf, -inf and nan, as numbers that are not finite print") {
  const Value* inf = deterministic_builtins().find("inf");
  const Value* minus_inf = deterministic_builtins().find("-inf");
  const Value* nan = deterministic_builtins().find("nan");
  REQUIRE(inf != nullptr);
  REQUIRE(minus_inf != nullptr);
  REQUIRE(nan != nullptr);
  CHECK(num(*inf) == std::numeric_limits<double>::infinity());
  CHECK(num(*minus_inf) == -std::numeric_limits<double>::infinity());
  CHECK(std::isnan(num(*nan)));
  CHECK(to_string(*inf) == "inf");
  CHECK(to_string(*minus_inf) == "-inf");
  CHECK(to_string(*nan) == "nan");
}
