// uniform_discrete: lo … hi - 1; conformance, the list gibbs enumerates and its bound, the integer domain and the
// ±2^53 bounds, exact draws over the widest range.
// SPDX-License-Identifier: Apache-2.0
#include "tests/support/dist_conformance.hpp"

namespace vnt::test {
namespace uniform_discrete_test {

constexpr double k2To53 = 9007199254740992.0;

std::vector<Value> integers(double lo, double hi) {
  std::vector<Value> out;
  for (double x = lo; x < hi; ++x) out.push_back(num(x));
  return out;
}

}  // namespace uniform_discrete_test

TEST_CASE("uniform_discrete conforms") {
  using uniform_discrete_test::integers, uniform_discrete_test::k2To53;
  const Sp& sp = builtin_sp("uniform_discrete");
  // A point mass, a die, negative values, offsets where only whole numbers remain, the support's two ends.
  for (auto [lo, hi] : {std::pair{0.0, 1.0}, {1.0, 7.0}, {-3.0, 4.0}, {1e15, 1e15 + 9}, {-k2To53, -k2To53 + 5},
                        {k2To53 - 3, k2To53}, {0.0, 4096.0}}) {
    // check_discrete also compares the list enumerate gives with this one, value by value.
    check_discrete(sp, {num(lo), num(hi)}, integers(lo, hi), [w = hi - lo](double) { return 1 / w; });
  }
}

TEST_CASE("uniform_discrete lists lo to hi - 1 for gibbs up to 4096 values, and nothing beyond") {
  using uniform_discrete_test::k2To53;
  const Sp& sp = builtin_sp("uniform_discrete");
  auto listed = sp.enumerate(Call(sp, {num(-10), num(4086)}).args());
  REQUIRE(listed.has_value());
  REQUIRE(listed->size() == 4096);
  CHECK(values_equal(listed->front(), num(-10)));
  CHECK(values_equal(listed->back(), num(4085)));
  for (auto [lo, hi] : {std::pair{0.0, 4097.0}, {-k2To53, k2To53}})
    CHECK_FALSE(sp.enumerate(Call(sp, {num(lo), num(hi)}).args()));
  check_error([&] { sp.enumerate(Call(sp, {num(3), num(3)}).args()); }, ErrorKind::kDomain,
              "uniform_discrete: argument 2 (hi) is 3, but must be greater than argument 1 (lo), which is 3");
}

TEST_CASE("uniform_discrete errors") {
  using uniform_discrete_test::k2To53;
  const Sp& sp = builtin_sp("uniform_discrete");
  check_invalid(sp, {num(0.5), num(3)}, num(1), "uniform_discrete: argument 1 (lo) is 0.5, but must be an integer");
  check_invalid(sp, {num(0), num(-2.25)}, num(1), "uniform_discrete: argument 2 (hi) is -2.25, but must be an integer");
  // An infinity is a whole number to floor, but not an integer bound.
  check_invalid(sp, {num(0), num(kInf)}, num(1), "uniform_discrete: argument 2 (hi) is inf, but must be finite");
  check_invalid(sp, {num(-kInf), num(3)}, num(1), "uniform_discrete: argument 1 (lo) is -inf, but must be finite");
  check_invalid(sp, {num(3), num(3)}, num(3),
                "uniform_discrete: argument 2 (hi) is 3, but must be greater than argument 1 (lo), which is 3");
  check_invalid(sp, {num(5), num(2)}, num(3),
                "uniform_discrete: argument 2 (hi) is 2, but must be greater than argument 1 (lo), which is 5");
  // Past ±2^53 not every integer is a double.
  check_invalid(sp, {num(-1e16), num(0)}, num(-1),
                "uniform_discrete: argument 1 (lo) is -1e+16, but must be at least -9007199254740992");
  check_invalid(sp, {num(0), num(k2To53 + 2)}, num(1),
                "uniform_discrete: argument 2 (hi) is 9007199254740994, but must be at most 9007199254740992");
  check_malformed(sp, {num(0)}, num(0), ErrorKind::kArity, "uniform_discrete: expected 2 arguments, got 1");
  check_malformed(sp, {num(0), make_string("hi")}, num(0), ErrorKind::kType,
                  "uniform_discrete: argument 2 (hi) must be a number, got a string");
  Call call(sp, {num(-2), num(3)});
  for (double x : {-3.0, 3.0, 0.5, -1.75, kInf, -kInf}) CHECK(call.log_density(num(x)) == -kInf);
  for (double x : {-2.0, 0.0, 2.0}) CHECK(call.log_density(num(x)) == doctest::Approx(-std::log(5.0)));
  CHECK(call.log_density(make_list({})) == -kInf);
}

TEST_CASE("uniform_discrete over the widest range: exact integers, odd ones too") {
  using uniform_discrete_test::k2To53;
  const Sp& sp = builtin_sp("uniform_discrete");
  Call call(sp, {num(-k2To53), num(k2To53)});
  CHECK(call.log_density(num(k2To53 - 1)) == doctest::Approx(-54 * std::log(2.0)).epsilon(1e-15));
  CHECK(call.log_density(num(k2To53)) == -kInf);
  CHECK(call.log_density(num(-k2To53)) == doctest::Approx(-54 * std::log(2.0)).epsilon(1e-15));
  Rng rng(kSeed);
  constexpr int kCount = 4000;
  int odd_upper = 0, upper = 0;
  double sum = 0;
  for (int i = 0; i < kCount; ++i) {
    const double x = std::get<double>(call.simulate(rng));
    REQUIRE(x == std::floor(x));
    REQUIRE((x >= -k2To53 && x < k2To53));
    sum += x / k2To53;
    if (x >= 0) ++upper, odd_upper += std::fmod(x, 2.0) != 0;
  }
  // Uniform on [-1, 1) after scaling: mean 0, sd 1 / sqrt(3).
  CHECK(std::fabs(sum / kCount) < 4 / std::sqrt(3.0 * kCount));
  // lo + floor(u (hi - lo)), u a double, gives only even values there: u in [1/2, 1) is a multiple of 2^-53.
  CHECK(odd_upper / double(upper) == doctest::Approx(0.5).epsilon(0.1));
  Rng naive_rng(kSeed);
  int naive_odd = 0;
  for (int i = 0; i < kCount; ++i) {
    const double u = 0.5 + naive_rng.uniform() / 2;
    naive_odd += std::fmod(-k2To53 + std::floor(u * 2 * k2To53), 2.0) != 0;
  }
  CHECK(naive_odd == 0);
}

}  // namespace vnt::test
