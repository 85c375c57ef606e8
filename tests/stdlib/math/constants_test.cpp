// Tests for the named constants.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>

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
