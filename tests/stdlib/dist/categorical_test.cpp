// categorical: indices 0..k-1 with probabilities p; conformance, enumerate, probability-vector messages.
// SPDX-License-Identifier: Apache-2.0
#include "tests/support/dist_conformance.hpp"

namespace vnt::test {

TEST_CASE("categorical conforms") {
  const Sp& sp = builtin_sp("categorical");
  for (std::vector<double> p : {std::vector<double>{1}, {0.5, 0.5}, {0.1, 0.0, 0.6, 0.3}, {0.01, 0.02, 0.97}}) {
    CAPTURE(to_string(vec(p)));
    check_discrete(sp, {vec(p)}, count_range(0, static_cast<int>(p.size()) - 1),
                   [p](double k) { return p[static_cast<size_t>(k)]; });
  }
  CHECK(Call(sp, {vec({0.3, 0.7 + 1e-9})}).log_density(num(0)) == doctest::Approx(std::log(0.3)));
}

TEST_CASE("categorical errors") {
  const Sp& sp = builtin_sp("categorical");
  check_invalid(sp, {vec({})}, num(0), "categorical: argument 1 (p) is empty, but must have at least one element");
  check_invalid(
      sp, {vec({0.5, -0.5, 1})}, num(0),
      "categorical: argument 1 (p) has p[1] = -0.5, but each probability must be finite and non-negative");
  check_invalid(
      sp, {vec({0.5, kInf})}, num(0),
      "categorical: argument 1 (p) has p[1] = inf, but each probability must be finite and non-negative");
  check_invalid(sp, {vec({0.5, 0.4})}, num(0), "categorical: argument 1 (p) sums to 0.9, but must sum to 1");
  check_error([&] { sp.enumerate(Call(sp, {vec({2})}).args()); }, ErrorKind::kDomain,
              "categorical: argument 1 (p) sums to 2, but must sum to 1");
  check_malformed(sp, {vec({1}), num(0)}, num(0), ErrorKind::kArity, "categorical: expected 1 argument, got 2");
  check_malformed(sp, {num(1)}, num(0), ErrorKind::kType,
                  "categorical: argument 1 (p) must be a vector, got a number");
  Call call(sp, {vec({0.2, 0.8})});
  for (const Value& x : {num(-1), num(2), num(0.5), Value(true), vec({0})}) CHECK(call.log_density(x) == -kInf);
}

}  // namespace vnt::test
