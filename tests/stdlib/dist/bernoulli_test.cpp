// bernoulli: 0/1 numbers, p defaults to 0.5; conformance, enumerate, messages.
// SPDX-License-Identifier: Apache-2.0
#include "tests/support/dist_conformance.hpp"

namespace vnt::test {

TEST_CASE("bernoulli conforms") {
  const Sp& sp = builtin_sp("bernoulli");
  for (double p : {0.5, 0.1, 0.97, 0.0, 1.0})
    check_discrete(sp, {num(p)}, {num(0), num(1)}, [p](double k) { return k == 1 ? p : 1 - p; });
  check_discrete(sp, {}, {num(0), num(1)}, [](double) { return 0.5; });
}

TEST_CASE("bernoulli errors") {
  const Sp& sp = builtin_sp("bernoulli");
  check_invalid(sp, {num(1.5)}, num(0), "bernoulli: argument 1 (p) is 1.5, but must be in [0, 1]");
  check_invalid(sp, {num(-0.25)}, num(0), "bernoulli: argument 1 (p) is -0.25, but must be in [0, 1]");
  check_malformed(sp, {num(0.5), num(0.5)}, num(0), ErrorKind::kArity,
                  "bernoulli: expected 0 to 1 arguments, got 2");
  check_malformed(sp, {make_string("p")}, num(0), ErrorKind::kType,
                  "bernoulli: argument 1 (p) must be a number, got a string");
  Call call(sp, {num(0.3)});
  for (double x : {0.5, 2.0, -1.0}) CHECK(call.log_density(num(x)) == -kInf);
  CHECK(call.log_density(num(1)) == doctest::Approx(std::log(0.3)));
}

}  // namespace vnt::test
