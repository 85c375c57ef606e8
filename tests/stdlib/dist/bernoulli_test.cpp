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

namespace vnt::test {
namespace {

/// Operand 0 was computed as logistic(z).
struct KnownLogOdds final : ArgOrigins {
  double z;
  explicit KnownLogOdds(double z_) : z(z_) {}
  std::optional<double> log_odds(size_t i) const override { return i == 0 ? std::optional<double>(z) : std::nullopt; }
};

}  // namespace

TEST_CASE("bernoulli and flip score from the log-odds where the probability has rounded to 0 or 1") {
  for (const char* name : {"bernoulli", "flip"}) {
    CAPTURE(std::string(name));
    const Sp& sp = builtin_sp(name);
    const bool boolean = std::string(name) == "flip";
    auto outcome = [&](double y) { return boolean ? Value(y == 1) : num(y); };
    auto score = [&](double p, double z, double y) {
      Value pv = num(p);
      const Value* ptrs[] = {&pv};
      KnownLogOdds origin(z);
      return sp.log_density(outcome(y), Args(ptrs, nullptr, &origin));
    };
    CHECK(score(1.0, 40, 0) == doctest::Approx(-40 - std::log1p(std::exp(-40.0))).epsilon(1e-15));
    CHECK(score(0.0, -800, 1) == doctest::Approx(-800).epsilon(1e-15));
    CHECK(score(1.0, 40, 1) == doctest::Approx(-std::exp(-40.0)).epsilon(1e-12));
    // Where p is accurate enough, the log-odds are not asked for: a wrong z changes nothing.
    CHECK(score(0.3, 99, 1) == doctest::Approx(std::log(0.3)));
    CHECK(score(0.3, 99, 0) == doctest::Approx(std::log(0.7)));
    // Without an origin (a literal probability), 1 is certain.
    Value one = num(1.0);
    const Value* ptrs[] = {&one};
    CHECK(sp.log_density(outcome(0), Args(ptrs)) == -kInf);
  }
}

}  // namespace vnt::test
