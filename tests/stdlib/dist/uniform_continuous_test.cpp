// uniform_continuous: conformance over a parameter table, the lo < hi check, messages.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/uniform.hpp>

#include "tests/support/dist_conformance.hpp"

namespace vnt::test {

TEST_CASE("uniform_continuous conforms") {
  const Sp& sp = builtin_sp("uniform_continuous");
  for (auto [lo, hi] : {std::pair{0.0, 1.0}, {-5.0, 3.0}, {1e3, 1e3 + 1e-3}})
    check_continuous(sp, {num(lo), num(hi)}, boost::math::uniform_distribution<>(lo, hi), lo, hi);
}

TEST_CASE("uniform_continuous errors") {
  const Sp& sp = builtin_sp("uniform_continuous");
  check_invalid(sp, {num(1), num(0)}, num(0.5),
                "uniform_continuous: argument 2 (hi) is 0, but must be greater than argument 1 (lo), which is 1");
  check_invalid(sp, {num(2), num(2)}, num(2),
                "uniform_continuous: argument 2 (hi) is 2, but must be greater than argument 1 (lo), which is 2");
  check_invalid(sp, {num(0), num(kInf)}, num(1),
                "uniform_continuous: argument 2 (hi) is inf, but must be a finite number");
  check_malformed(sp, {num(0)}, num(0), ErrorKind::kArity, "uniform_continuous: expected 2 arguments, got 1");
  check_malformed(sp, {Value(true), make_symbol("x")}, num(0), ErrorKind::kType,
                  "uniform_continuous: argument 2 (hi) must be a number, got a symbol");
  Call call(sp, {num(0), num(2)});
  CHECK(call.log_density(num(0)) == doctest::Approx(std::log(0.5)));
  CHECK(call.log_density(num(2)) == doctest::Approx(std::log(0.5)));
  for (double x : {-1e-9, 2.5, -kInf}) CHECK(call.log_density(num(x)) == -kInf);
  // hi - lo overflows: the density is still 1 / (hi - lo), not zero.
  Call wide(sp, {num(-1e308), num(1e308)});
  CHECK(wide.log_density(num(0)) == doctest::Approx(-std::log(2.0) - std::log(1e308)));
  CHECK(wide.log_density(num(1e308)) == doctest::Approx(-std::log(2.0) - std::log(1e308)));
  CHECK(Call(sp, {num(0), num(5e-324)}).log_density(num(0)) == doctest::Approx(-std::log(5e-324)));
}

}  // namespace vnt::test
