// make_dir_cat and make_sym_dir_cat: counts, predictive probabilities, exchangeability (sequence = marginal
// likelihood), draws, aux, absorbing a change of the concentrations, errors.
// SPDX-License-Identifier: Apache-2.0
#include "tests/support/dist_conformance.hpp"

namespace vnt::test {
namespace {

struct Die {
  Value proc;
  const Sp& sp() const { return procedure(proc).sp(); }
  SpAux& aux() const { return *procedure(proc).aux(); }
  Call call() const { return Call(sp(), {}, &aux()); }
  void add(double k) const { sp().incorporate(num(k), call().args()); }
};

Die make_die(std::string_view maker, Params args) {
  Rng rng(kSeed);
  return {Call(builtin_sp(maker), std::move(args)).simulate(rng)};
}

/// log of the Dirichlet-multinomial probability of a sequence with these counts.
double log_marginal(const std::vector<double>& alpha, const std::vector<double>& counts) {
  double a = 0, n = 0, w = 0;
  for (size_t k = 0; k < alpha.size(); ++k) {
    a += alpha[k];
    n += counts[k];
    w += std::lgamma(alpha[k] + counts[k]) - std::lgamma(alpha[k]);
  }
  return w + std::lgamma(a) - std::lgamma(a + n);
}

std::vector<Value> categories(int k) { return count_range(0, k - 1); }

}  // namespace

TEST_CASE("dir_cat predictive, counts and exchangeability") {
  Die die = make_die("make_dir_cat", {vec({1, 2, 0.5})});
  CHECK_FALSE(builtin_sp("make_dir_cat").is_random());
  CHECK(die.sp().is_random());
  CHECK(die.call().log_density(num(1)) == doctest::Approx(std::log(2 / 3.5)));
  auto fresh = die.aux().clone();
  const std::vector<double> seq{0, 2, 2, 1, 0, 2, 1, 1, 1};
  double sequential = 0;
  for (double x : seq) {
    sequential += die.call().log_density(num(x));
    die.add(x);
  }
  CHECK(die.aux().to_string() == "counts [2 4 3]");
  // Any order gives the Dirichlet-multinomial marginal likelihood.
  CHECK(sequential == doctest::Approx(log_marginal({1, 2, 0.5}, {2, 4, 3})).epsilon(1e-12));
  check_discrete(
      die.sp(), {}, categories(3), [](double k) { return std::array{3.0, 6.0, 3.5}[static_cast<size_t>(k)] / 12.5; },
      &die.aux());
  auto snapshot = die.aux().clone();
  CHECK_FALSE(snapshot->equals(*fresh));
  for (double x : seq) die.sp().unincorporate(num(x), die.call().args());
  CHECK(die.aux().equals(*fresh));
  // Not a category: density 0, and never counted.
  for (const Value& x : {num(3), num(-1), num(0.5), Value(true), vec({1})}) {
    CAPTURE(to_string(x));
    CHECK(die.call().log_density(x) == -kInf);
    die.sp().incorporate(x, die.call().args());
    CHECK(die.aux().equals(*fresh));
  }
}

TEST_CASE("sym_dir_cat draws follow the predictive, whose probabilities the counts move") {
  Die die = make_die("make_sym_dir_cat", {num(0.5), num(4)});
  check_discrete(
      die.sp(), {}, categories(4), [](double) { return 0.25; }, &die.aux());
  for (double x : {3, 3, 3, 1}) die.add(x);
  check_discrete(
      die.sp(), {}, categories(4), [](double k) { return (0.5 + (k == 3 ? 3 : k == 1 ? 1 : 0)) / 6; }, &die.aux());
  CHECK(die.aux().to_string() == "counts [0 1 0 3]");
}

// The concentrations' sum overflows: the predictive was 0 for every category, so every draw scored -inf.
TEST_CASE("dir_cat with concentrations whose sum is past the largest double") {
  Die die = make_die("make_dir_cat", {vec({1e308, 1e308, 2e307})});
  CHECK(die.call().log_density(num(0)) == doctest::Approx(std::log(1 / 2.2)));
  CHECK(die.call().log_density(num(2)) == doctest::Approx(std::log(0.2 / 2.2)));
  check_discrete(
      die.sp(), {}, categories(3), [](double k) { return (k == 2 ? 0.2 : 1.0) / 2.2; }, &die.aux());
}

TEST_CASE("the dir_cat makers absorb a change of the concentrations: they weigh the draws at once and set them") {
  const Sp& maker = builtin_sp("make_dir_cat");
  CHECK(maker.can_absorb(0));
  Die die = make_die("make_dir_cat", {vec({1, 1, 1})});
  for (double x : {0, 0, 2, 1, 0}) die.add(x);
  CHECK(Call(maker, {vec({2, 0.5, 3})}).log_density(die.proc) ==
        doctest::Approx(log_marginal({2, 0.5, 3}, {3, 1, 1})).epsilon(1e-12));
  CHECK(Call(maker, {vec({2, -0.5, 3})}).log_density(die.proc) == -kInf);
  // A fourth category holds no draw; dropping the third, which holds one, has density 0.
  CHECK(Call(maker, {vec({1, 1, 1, 1})}).log_density(die.proc) ==
        doctest::Approx(log_marginal({1, 1, 1, 1}, {3, 1, 1, 0})).epsilon(1e-12));
  CHECK(Call(maker, {vec({1, 1})}).log_density(die.proc) == -kInf);
  // Concentrations where lgamma overflows: the draws one by one.
  CHECK(Call(maker, {vec({1e308, 1e308, 1e308})}).log_density(die.proc) == doctest::Approx(5 * std::log(1 / 3.0)));
  auto before = die.aux().clone();
  maker.incorporate(die.proc, Call(maker, {vec({2, 0.5, 3, 1})}).args());
  CHECK(die.call().log_density(num(3)) == doctest::Approx(std::log(1 / 11.5)));
  CHECK(die.aux().to_string() == "counts [3 1 1 0]");
  maker.incorporate(die.proc, Call(maker, {vec({1, 1, 1})}).args());  // a rejected move puts the old ones back
  CHECK(die.aux().equals(*before));

  const Sp& sym = builtin_sp("make_sym_dir_cat");
  CHECK(sym.can_absorb(0));
  CHECK_FALSE(sym.can_absorb(1));  // a new K makes the procedure again
  Die s = make_die("make_sym_dir_cat", {num(1), num(3)});
  for (double x : {0, 0, 2}) s.add(x);
  CHECK(Call(sym, {num(2.5), num(3)}).log_density(s.proc) ==
        doctest::Approx(log_marginal({2.5, 2.5, 2.5}, {2, 0, 1})).epsilon(1e-12));
  sym.incorporate(s.proc, Call(sym, {num(2.5), num(3)}).args());
  CHECK(s.call().log_density(num(1)) == doctest::Approx(std::log(2.5 / 10.5)));
}

TEST_CASE("dir_cat errors") {
  Rng rng(kSeed);
  const Sp& maker = builtin_sp("make_dir_cat");
  check_error([&] { Call(maker, {vec({1, -2})}).simulate(rng); }, ErrorKind::kDomain,
              "make_dir_cat: argument 1 (alpha) at index 1 is -2, but each concentration must be positive and finite");
  check_error([&] { Call(maker, {vec({})}).simulate(rng); }, ErrorKind::kDomain,
              "make_dir_cat: argument 1 (alpha) is empty, but must have at least one element");
  check_error([&] { Call(maker, {num(1)}).simulate(rng); }, ErrorKind::kType,
              "make_dir_cat: argument 1 (alpha) must be a vector, got a number");
  check_error([&] { Call(maker, {}).simulate(rng); }, ErrorKind::kArity, "make_dir_cat: expected 1 argument, got 0");
  const Sp& sym = builtin_sp("make_sym_dir_cat");
  check_error([&] { Call(sym, {num(0), num(3)}).simulate(rng); }, ErrorKind::kDomain,
              "make_sym_dir_cat: argument 1 (a) is 0, but must be positive");
  check_error([&] { Call(sym, {num(1), num(0)}).simulate(rng); }, ErrorKind::kDomain,
              "make_sym_dir_cat: argument 2 is 0, but must be at least 1");
  check_error([&] { Call(sym, {num(1), num(2.5)}).simulate(rng); }, ErrorKind::kDomain,
              "make_sym_dir_cat: argument 2 is 2.5, but must be a non-negative integer");
  check_error([&] { Call(sym, {num(1), num(1e12)}).simulate(rng); }, ErrorKind::kDomain,
              "make_sym_dir_cat: argument 2 is 1000000000000, but must be at most 100000000");
  Die die = make_die("make_sym_dir_cat", {num(1), num(2)});
  check_error([&] { Call(die.sp(), {num(1)}, &die.aux()).simulate(rng); }, ErrorKind::kArity,
              "dir_cat: expected 0 arguments, got 1");
  try {  // unincorporating a draw that was never incorporated is a bug in the caller, not a user error
    die.sp().unincorporate(num(1), die.call().args());
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kInternal);
  }
}

}  // namespace vnt::test
