// beta: conformance over a parameter table (including U-shaped and flat), boundary densities, messages.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/beta.hpp>

#include "tests/support/dist_conformance.hpp"

namespace vnt::test {

TEST_CASE("beta conforms") {
  const Sp& sp = builtin_sp("beta");
  for (auto [a, b] : {std::pair{1.0, 1.0}, {0.5, 0.5}, {2.0, 5.0}, {1.0, 3.0}, {30.0, 0.8}})
    check_continuous(sp, {num(a), num(b)}, boost::math::beta_distribution<>(a, b), 0, 1);
}

TEST_CASE("beta boundaries and errors") {
  const Sp& sp = builtin_sp("beta");
  CHECK(Call(sp, {num(1), num(3)}).log_density(num(0)) == doctest::Approx(std::log(3.0)));
  CHECK(Call(sp, {num(2), num(3)}).log_density(num(0)) == -kInf);
  for (double x : {-0.1, 1.5, kInf}) CHECK(Call(sp, {num(2), num(2)}).log_density(num(x)) == -kInf);
  Rng rng(kSeed);  // both gammas underflow for tiny parameters; draws must stay strictly inside (0, 1)
  for (int i = 0; i < 1000; ++i) {
    double x = std::get<double>(Call(sp, {num(1e-3), num(1e-3)}).simulate(rng));
    CHECK((x > 0 && x < 1));
  }
  check_invalid(sp, {num(0), num(1)}, num(0.5), "beta: argument 1 (alpha) is 0, but must be positive");
  check_invalid(sp, {num(1), num(-1)}, num(0.5), "beta: argument 2 (beta) is -1, but must be positive");
  check_malformed(sp, {num(1), num(1), num(1)}, num(0.5), ErrorKind::kArity, "beta: expected 2 arguments, got 3");
  check_malformed(sp, {num(1), vec({1})}, num(0.5), ErrorKind::kType,
                  "beta: argument 2 (beta) must be a number, got a vector");
}

}  // namespace vnt::test
