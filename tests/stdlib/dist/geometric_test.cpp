// geometric: failures before the first success; conformance, the smallest p, messages, p near 0 and 1.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/geometric.hpp>

#include <tuple>

#include "tests/support/dist_conformance.hpp"

namespace vnt::test {

TEST_CASE("geometric conforms") {
  const Sp& sp = builtin_sp("geometric");
  for (double p : {1.0, 0.9, 0.5, 0.2, 0.03}) {
    boost::math::geometric_distribution<> ref(p);
    // Far enough that the tail left out, (1 - p)^(hi + 1), is below 1e-11.
    const int hi = p == 1 ? 0 : static_cast<int>(std::ceil(std::log(1e-11) / std::log1p(-p)));
    check_discrete(sp, {num(p)}, count_range(0, hi), [&](double k) { return pdf(ref, k); });
  }
}

TEST_CASE("geometric errors") {
  const Sp& sp = builtin_sp("geometric");
  // No success ever, and successes so rare that the mean would pass poisson's largest rate.
  check_invalid(sp, {num(0)}, num(0), "geometric: argument 1 (p) is 0, but must be at least 1e-12");
  check_invalid(sp, {num(9e-13)}, num(0), "geometric: argument 1 (p) is 9e-13, but must be at least 1e-12");
  check_invalid(sp, {num(1.5)}, num(0), "geometric: argument 1 (p) is 1.5, but must be in [0, 1]");
  check_invalid(sp, {num(-0.5)}, num(0), "geometric: argument 1 (p) is -0.5, but must be in [0, 1]");
  check_malformed(sp, {}, num(0), ErrorKind::kArity, "geometric: expected 1 argument, got 0");
  check_malformed(sp, {num(0.5), num(0.5)}, num(0), ErrorKind::kArity, "geometric: expected 1 argument, got 2");
  check_malformed(sp, {make_symbol("p")}, num(0), ErrorKind::kType,
                  "geometric: argument 1 (p) must be a number, got a symbol");
  Call call(sp, {num(0.5)});
  // Past 2^53 not every count is a double: the support stops there.
  for (double x : {-1.0, 0.5, 2.25, kInf, 9007199254740994.0}) CHECK(call.log_density(num(x)) == -kInf);
  CHECK(call.log_density(num(0)) == doctest::Approx(std::log(0.5)));
  CHECK(call.log_density(num(9007199254740992.0)) == doctest::Approx(-9007199254740993.0 * std::log(2.0)));
  CHECK_FALSE(sp.enumerate(call.args()).has_value());
}

// References from mpmath at 50 digits, log(p) + k log1p(-p) for the double p.
TEST_CASE("geometric near p = 0 and p = 1: log1p where 1 - p has lost digits, no 0 log 0") {
  const Sp& sp = builtin_sp("geometric");
  auto naive = [](double k, double p) { return std::log(p) + k * std::log(1 - p); };
  for (auto [p, k, ref] : {std::tuple{1e-12, 1e12, -28.6310211159290482082159},
                           {1e-12, 3e13, -57.63102111594354762492869},
                           {1 - std::pow(2.0, -53), 2.0, -73.47360113935420290924891}}) {
    CAPTURE(p);
    CHECK(Call(sp, {num(p)}).log_density(num(k)) == doctest::Approx(ref).epsilon(1e-14));
  }
  // 1 - 1e-12 rounds by 9e-5 of 1e-12: 2e-5 nat off at the mean, 7e-4 further out.
  CHECK(std::fabs(naive(3e13, 1e-12) - -57.63102111594354762492869) > 5e-4);
  CHECK(Call(sp, {num(1)}).log_density(num(0)) == 0);
  CHECK(Call(sp, {num(1)}).log_density(num(1)) == -kInf);
  CHECK(std::isnan(naive(0, 1)));
}

TEST_CASE("geometric draws at the smallest p and at p = 1") {
  const Sp& sp = builtin_sp("geometric");
  Rng rng(kSeed);
  constexpr int kCount = 20000;
  double sum = 0;
  for (int i = 0; i < kCount; ++i) {
    const double k = std::get<double>(Call(sp, {num(1e-12)}).simulate(rng));
    REQUIRE(k == std::floor(k));
    REQUIRE((k >= 0 && k < 4e13));
    sum += k;
  }
  // Mean and sd (1 - p) / p and about 1 / p: 1e12.
  CHECK(std::fabs(sum / kCount / 1e12 - 1) < 4 / std::sqrt(double(kCount)));
  for (int i = 0; i < 100; ++i) {
    const Value k = Call(sp, {num(1)}).simulate(rng);
    CHECK(values_equal(k, num(0)));
    CHECK_FALSE(std::signbit(std::get<double>(k)));
  }
}

}  // namespace vnt::test
