// normal: conformance over a parameter table, domain/arity/type messages.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/normal.hpp>

#include <cmath>
#include <numbers>

#include "tests/support/dist_conformance.hpp"

namespace vnt::test {

TEST_CASE("normal conforms") {
  const Sp& sp = builtin_sp("normal");
  for (auto [mean, sd] : {std::pair{0.0, 1.0}, {-3.0, 0.25}, {100.0, 40.0}})
    check_continuous(sp, {num(mean), num(sd)}, boost::math::normal_distribution<>(mean, sd), -kInf, kInf);
}

TEST_CASE("normal errors") {
  const Sp& sp = builtin_sp("normal");
  check_invalid(sp, {num(0), num(-1)}, num(0), "normal: argument 2 (sd) is -1, but must be positive");
  check_invalid(sp, {num(0), num(0)}, num(0), "normal: argument 2 (sd) is 0, but must be positive");
  check_invalid(sp, {num(kInf), num(1)}, num(0), "normal: argument 1 (mean) is inf, but must be a finite number");
  // inf is positive: what it fails is being finite.
  check_invalid(sp, {num(0), num(kInf)}, num(0), "normal: argument 2 (sd) is inf, but must be finite");
  check_invalid(sp, {num(0), num(-kInf)}, num(0), "normal: argument 2 (sd) is -inf, but must be positive");
  check_malformed(sp, {num(0), num(1), num(2)}, num(0), ErrorKind::kArity, "normal: expected 2 arguments, got 3");
  check_malformed(sp, {vec({1}), num(1)}, num(0), ErrorKind::kType,
                  "normal: argument 1 (mean) must be a number, got a vector");
  CHECK(Call(sp, {num(0), num(1)}).log_density(vec({0})) == -kInf);
  CHECK(Call(sp, {num(0), num(1)}).log_density(num(kInf)) == -kInf);
}

TEST_CASE("normal draws stay finite when mean + sd z overflows") {
  const Sp& sp = builtin_sp("normal");
  Call call(sp, {num(1e308), num(1e308)});
  Rng rng(kSeed);
  for (int i = 0; i < 200; ++i) {
    double x = std::get<double>(call.simulate(rng));
    REQUIRE(std::isfinite(x));
    CHECK(std::isfinite(call.log_density(num(x))));
  }
  // x - mean overflows, z does not: z = -2, log density -2 - log(1e308) - log(2 pi) / 2.
  const double expected = -2.0 - std::log(1e308) - 0.5 * std::log(2 * std::numbers::pi);
  CHECK(call.log_density(num(-1e308)) == doctest::Approx(expected));
}

}  // namespace vnt::test
