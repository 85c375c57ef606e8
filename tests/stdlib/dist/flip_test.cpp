// flip: booleans, p defaults to 0.5; conformance, enumerate, messages.
// SPDX-License-Identifier: Apache-2.0
#include "tests/support/dist_conformance.hpp"

namespace vnt::test {

TEST_CASE("flip conforms") {
  const Sp& sp = builtin_sp("flip");
  for (double p : {0.5, 0.02, 0.8, 1.0})
    check_discrete(sp, {num(p)}, {Value(false), Value(true)}, [p](double k) { return k == 1 ? p : 1 - p; });
  check_discrete(sp, {}, {Value(false), Value(true)}, [](double) { return 0.5; });
}

TEST_CASE("flip errors") {
  const Sp& sp = builtin_sp("flip");
  check_invalid(sp, {num(2)}, Value(true), "flip: argument 1 (p) is 2, but must be in [0, 1]");
  check_malformed(sp, {num(0.5), num(0.5)}, Value(true), ErrorKind::kArity,
                  "flip: expected 0 to 1 arguments, got 2");
  check_malformed(sp, {vec({0.5})}, Value(true), ErrorKind::kType,
                  "flip: argument 1 (p) must be a number, got a vector");
  Call call(sp, {num(0.25)});
  Rng rng(kSeed);
  CHECK(is_bool(Call(sp, {}).simulate(rng)));
  CHECK(call.log_density(Value(false)) == doctest::Approx(std::log(0.75)));
  CHECK(call.log_density(make_symbol("heads")) == -kInf);
  CHECK(call.log_density(num(0.5)) == -kInf);
}

}  // namespace vnt::test
