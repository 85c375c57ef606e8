// make_beta_bernoulli: counts, predictive probabilities, exchangeability (sequence = marginal likelihood), aux.
// SPDX-License-Identifier: Apache-2.0
#include "tests/support/dist_conformance.hpp"

namespace vnt::test {
namespace {

double log_beta(double a, double b) { return std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b); }

struct Coin {
  Value proc;
  const Sp& sp() const { return procedure(proc).sp(); }
  SpAux& aux() const { return *procedure(proc).aux(); }
  Call call() const { return Call(sp(), {}, &aux()); }
};

Coin make_coin(double alpha, double beta) {
  Rng rng(kSeed);
  return {Call(builtin_sp("make_beta_bernoulli"), {num(alpha), num(beta)}).simulate(rng)};
}

}  // namespace

TEST_CASE("beta_bernoulli predictive, counts and exchangeability") {
  Coin coin = make_coin(2, 3);
  CHECK_FALSE(builtin_sp("make_beta_bernoulli").is_random());
  CHECK(coin.sp().is_random());
  CHECK(coin.call().log_density(Value(true)) == doctest::Approx(std::log(2.0 / 5)));
  auto fresh = coin.aux().clone();
  std::vector<bool> seq{true, true, false, true, false, false, false, true, true};
  double sequential = 0, heads = 0;
  for (bool x : seq) {
    sequential += coin.call().log_density(Value(x));
    coin.sp().incorporate(Value(x), coin.call().args());
    heads += x;
  }
  CHECK(coin.aux().to_string() == "heads 5, tails 4");
  // Any order gives the Beta-Bernoulli marginal likelihood B(a + h, b + t) / B(a, b).
  CHECK(sequential == doctest::Approx(log_beta(2 + heads, 3 + 9 - heads) - log_beta(2, 3)).epsilon(1e-12));
  CHECK(coin.call().log_density(Value(false)) == doctest::Approx(std::log(7.0 / 14)));
  check_discrete(
      coin.sp(), {}, {Value(false), Value(true)}, [](double) { return 0.5; }, &coin.aux());
  auto snapshot = coin.aux().clone();
  CHECK_FALSE(snapshot->equals(*fresh));
  for (bool x : seq) coin.sp().unincorporate(Value(x), coin.call().args());
  CHECK(coin.aux().equals(*fresh));
  CHECK(snapshot->to_string() == "heads 5, tails 4");
}

TEST_CASE("beta_bernoulli samples follow the predictive") {
  Coin coin = make_coin(0.5, 1.5);
  for (int i = 0; i < 3; ++i) coin.sp().incorporate(Value(true), coin.call().args());
  check_discrete(
      coin.sp(), {}, {Value(false), Value(true)}, [](double k) { return k == 1 ? 3.5 / 5 : 1.5 / 5; },
      &coin.aux());
  CHECK(coin.call().log_density(num(2)) == -kInf);
}

// alpha + beta overflows to inf: the plain predictive alpha / (alpha + beta) was 0 for both sides, so every flip
// scored -inf and every draw was tails.
TEST_CASE("beta_bernoulli with alpha + beta past the largest double") {
  Coin coin = make_coin(1e308, 1e308);
  CHECK(coin.call().log_density(Value(true)) == doctest::Approx(std::log(0.5)));
  CHECK(coin.call().log_density(Value(false)) == doctest::Approx(std::log(0.5)));
  check_discrete(
      coin.sp(), {}, {Value(false), Value(true)}, [](double) { return 0.5; }, &coin.aux());
  Coin skewed = make_coin(1.5e308, 0.5e308);
  CHECK(skewed.call().log_density(Value(true)) == doctest::Approx(std::log(0.75)));
  CHECK(skewed.call().log_density(Value(false)) == doctest::Approx(std::log(0.25)));
  check_discrete(
      skewed.sp(), {}, {Value(false), Value(true)}, [](double k) { return k == 1 ? 0.75 : 0.25; }, &skewed.aux());
}

TEST_CASE("make_beta_bernoulli absorbs a change of alpha and beta: it weighs the flips at once and sets them") {
  const Sp& maker = builtin_sp("make_beta_bernoulli");
  CHECK(maker.can_absorb(0));
  CHECK(maker.can_absorb(1));
  Coin coin = make_coin(1, 1);
  for (bool x : {true, true, false, true}) coin.sp().incorporate(Value(x), coin.call().args());
  CHECK(Call(maker, {num(2), num(3)}).log_density(coin.proc) ==
        doctest::Approx(log_beta(2 + 3, 3 + 1) - log_beta(2, 3)).epsilon(1e-12));
  CHECK(Call(maker, {num(2), num(-3)}).log_density(coin.proc) == -kInf);
  // Parameters where lgamma overflows: the flips one by one (each 1/2, as the two counts are equal).
  CHECK(Call(maker, {num(1e308), num(1e308)}).log_density(coin.proc) == doctest::Approx(4 * std::log(0.5)));
  maker.incorporate(coin.proc, Call(maker, {num(2), num(3)}).args());
  CHECK(coin.call().log_density(Value(true)) == doctest::Approx(std::log(5.0 / 9)));
  CHECK(coin.aux().to_string() == "heads 3, tails 1");
}

TEST_CASE("beta_bernoulli errors") {
  const Sp& maker = builtin_sp("make_beta_bernoulli");
  Rng rng(kSeed);
  check_error(
      [&] {
        Call(maker, {num(-1), num(1)}).simulate(rng);
      },
      ErrorKind::kDomain, "make_beta_bernoulli: argument 1 (alpha) is -1, but must be positive");
  check_error(
      [&] {
        Call(maker, {num(1), num(0)}).simulate(rng);
      },
      ErrorKind::kDomain, "make_beta_bernoulli: argument 2 (beta) is 0, but must be positive");
  check_error(
      [&] {
        Call(maker, {num(1), num(kInf)}).simulate(rng);
      },
      ErrorKind::kDomain, "make_beta_bernoulli: argument 2 (beta) is inf, but must be finite");
  check_error([&] { Call(maker, {num(1)}).simulate(rng); }, ErrorKind::kArity,
              "make_beta_bernoulli: expected 2 arguments, got 1");
  check_error(
      [&] {
        Call(maker, {num(1), Value(make_nil())}).simulate(rng);
      },
      ErrorKind::kType, "make_beta_bernoulli: argument 2 (beta) must be a number, got nil");
  Coin coin = make_coin(1, 1);
  check_error([&] { Call(coin.sp(), {num(1)}, &coin.aux()).simulate(rng); }, ErrorKind::kArity,
              "beta_bernoulli: expected 0 arguments, got 1");
  try {  // unincorporating a flip that was never incorporated is a bug in the caller, not a user error
    coin.sp().unincorporate(Value(true), coin.call().args());
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kInternal);
  }
}

}  // namespace vnt::test
