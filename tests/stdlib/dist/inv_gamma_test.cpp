// inv_gamma: conformance over a parameter table, domain/arity/type messages.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/inverse_gamma.hpp>

#include "tests/support/dist_conformance.hpp"

namespace vnt::test {

TEST_CASE("inv_gamma conforms") {
  const Sp& sp = builtin_sp("inv_gamma");
  for (auto [shape, scale] : {std::pair{1.0, 1.0}, {3.0, 0.5}, {0.7, 2.0}, {20.0, 30.0}})
    check_continuous(sp, {num(shape), num(scale)}, boost::math::inverse_gamma_distribution<>(shape, scale), 0,
                     kInf);
}

TEST_CASE("inv_gamma errors") {
  const Sp& sp = builtin_sp("inv_gamma");
  check_invalid(sp, {num(-1), num(1)}, num(1), "inv_gamma: argument 1 (shape) is -1, but must be positive");
  check_invalid(sp, {num(1), num(0)}, num(1), "inv_gamma: argument 2 (scale) is 0, but must be positive");
  check_malformed(sp, {}, num(1), ErrorKind::kArity, "inv_gamma: expected 2 arguments, got 0");
  check_malformed(sp, {make_nil(), num(1)}, num(1), ErrorKind::kType,
                  "inv_gamma: argument 1 (shape) must be a number, got nil");
  Call call(sp, {num(2), num(1)});
  for (double x : {0.0, -3.0, kInf}) CHECK(call.log_density(num(x)) == -kInf);
}

}  // namespace vnt::test
