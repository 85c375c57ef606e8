// NaN as a key: a mem argument or a scope block that is NaN finds the entry it made (the language's `=` still
// says NaN differs from itself).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>

#include "tests/support/engine_fixture.hpp"

namespace vnt::nan_keys_tests {
namespace {

TEST_CASE("keys_equal: NaN equals NaN, -0 equals 0, and hashes agree") {
  Value nan(std::nan("")), other_nan(-std::nan("1")), zero(0.0), minus_zero(-0.0);
  CHECK_FALSE(values_equal(nan, nan));
  CHECK(keys_equal(nan, other_nan));
  CHECK(value_hash(nan) == value_hash(other_nan));
  CHECK(keys_equal(zero, minus_zero));
  CHECK(value_hash(zero) == value_hash(minus_zero));
  CHECK_FALSE(keys_equal(nan, zero));
  Value v = make_vector(Eigen::Vector2d(1, std::nan(""))), w = make_vector(Eigen::Vector2d(1, -std::nan("2")));
  CHECK_FALSE(values_equal(v, w));
  CHECK(keys_equal(v, w));
  CHECK(value_hash(v) == value_hash(w));
  CHECK(keys_equal(make_list({nan, Value(1.0)}), make_list({other_nan, Value(1.0)})));
}

TEST_CASE("a NaN scope block is one block: mh on it works, and forget removes it") {
  Engine e(3);
  test::run(e,
            "c: [assume c (scope_include 'g (/ 0 0) (normal 0 1))]\n"
            "[assume d (scope_include 'g (/ 0 0) (normal 0 1))]\n"
            "[infer (mh default one 20)]\n[infer (mh g one 20)]\n[infer (mh g all 5)]\n");
  CHECK(e.trace().scopes().find("g")->blocks().size() == 1);
  test::run(e, "[forget d] [forget c]");
  CHECK(e.trace().live_nodes() == 0);
}

TEST_CASE("a NaN mem argument is one family") {
  Engine e(4);
  test::run(e,
            "[assume f (mem (lambda (x) (normal 0 1)))]\n"
            "[assume k (scope_include 'k 0 (normal 0 1))]\n"
            "[assume a (f (* k (/ 0 0)))]\n[assume b (f (/ 0 0))]\n");
  CHECK(std::get<double>(e.report("a")) == std::get<double>(e.report("b")));
  size_t nodes = e.trace().live_nodes();
  test::run(e, "[infer (mh k all 50)]");
  CHECK(e.trace().live_nodes() == nodes);  // each proposal on k finds the one family again
}

}  // namespace
}  // namespace vnt::nan_keys_tests
