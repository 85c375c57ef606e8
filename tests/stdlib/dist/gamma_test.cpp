// gamma: conformance over a parameter table (shape < 1 has a pole at 0), domain/arity/type messages.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/gamma.hpp>

#include "tests/support/dist_conformance.hpp"

namespace vnt::test {

TEST_CASE("gamma conforms") {
  const Sp& sp = builtin_sp("gamma");
  for (auto [shape, rate] : {std::pair{1.0, 1.0}, {0.5, 2.0}, {3.5, 0.1}, {40.0, 8.0}})
    check_continuous(sp, {num(shape), num(rate)}, boost::math::gamma_distribution<>(shape, 1 / rate), 0, kInf);
}

TEST_CASE("gamma errors") {
  const Sp& sp = builtin_sp("gamma");
  check_invalid(sp, {num(0), num(1)}, num(1), "gamma: argument 1 (shape) is 0, but must be positive");
  check_invalid(sp, {num(1), num(-2.5)}, num(1), "gamma: argument 2 (rate) is -2.5, but must be positive");
  check_malformed(sp, {num(1)}, num(1), ErrorKind::kArity, "gamma: expected 2 arguments, got 1");
  check_malformed(sp, {num(1), make_string("a")}, num(1), ErrorKind::kType,
                  "gamma: argument 2 (rate) must be a number, got a string");
  Call call(sp, {num(2), num(1)});
  for (double x : {0.0, -1.0, kInf}) CHECK(call.log_density(num(x)) == -kInf);
  Rng rng(kSeed);  // a tiny shape underflows in double precision; draws must stay in the support
  for (int i = 0; i < 1000; ++i) CHECK(std::get<double>(Call(sp, {num(1e-3), num(1)}).simulate(rng)) > 0);
}

}  // namespace vnt::test
