// make_crp: seating probabilities, exchangeability (a sequence scores the Ewens formula), labels of new tables,
// what gibbs enumerates, aux.
// SPDX-License-Identifier: Apache-2.0
#include "tests/support/dist_conformance.hpp"

namespace vnt::test {
namespace {

struct Restaurant {
  Value proc;
  const Sp& sp() const { return procedure(proc).sp(); }
  SpAux& aux() const { return *procedure(proc).aux(); }
  Call call() const { return Call(sp(), {}, &aux()); }
  void seat(double label) const { sp().incorporate(num(label), call().args()); }
  void unseat(double label) const { sp().unincorporate(num(label), call().args()); }
};

Restaurant make_restaurant(double alpha) {
  Rng rng(kSeed);
  return {Call(builtin_sp("make_crp"), {num(alpha)}).simulate(rng)};
}

std::vector<double> labels(const std::optional<std::vector<Value>>& values) {
  REQUIRE(values.has_value());
  std::vector<double> out;
  for (const Value& v : *values) out.push_back(as_number(v));
  return out;
}

}  // namespace

TEST_CASE("crp seats by table sizes, and a sequence scores the Ewens formula") {
  constexpr double kAlpha = 1.5;
  Restaurant r = make_restaurant(kAlpha);
  CHECK_FALSE(builtin_sp("make_crp").is_random());
  CHECK(r.sp().is_random());
  CHECK(r.call().log_density(num(0)) == doctest::Approx(0.0));  // the first customer opens a table
  auto empty = r.aux().clone();
  // Tables of sizes 3, 2, 1 (labels 0, 1, 4) seated in an interleaved order.
  const std::vector<double> seq{0, 1, 0, 4, 1, 0};
  double sequential = 0;
  for (double x : seq) {
    sequential += r.call().log_density(num(x));
    r.seat(x);
  }
  CHECK(r.aux().to_string() == "tables {0: 3, 1: 2, 4: 1}");
  // alpha^K prod (n_k - 1)! / (alpha (alpha + 1) ... (alpha + n - 1)), whatever the order and the labels.
  const double ewens = 3 * std::log(kAlpha) + std::lgamma(3) + std::lgamma(2) + std::lgamma(1) -
                       (std::lgamma(kAlpha + 6) - std::lgamma(kAlpha));
  CHECK(sequential == doctest::Approx(ewens).epsilon(1e-12));
  CHECK(r.call().log_density(num(1)) == doctest::Approx(std::log(2 / 7.5)));
  // Every unused label is the new table.
  CHECK(r.call().log_density(num(2)) == doctest::Approx(std::log(1.5 / 7.5)));
  CHECK(r.call().log_density(num(9)) == doctest::Approx(std::log(1.5 / 7.5)));
  // Draws: the occupied tables by size, a new table at the smallest unused label (2, the gap).
  check_discrete(
      r.sp(), {}, {num(0), num(1), num(2), num(4)},
      [](double k) { return k == 0 ? 3 / 7.5 : k == 1 ? 2 / 7.5 : k == 2 ? 1.5 / 7.5 : 1 / 7.5; }, &r.aux());
  auto snapshot = r.aux().clone();
  CHECK_FALSE(snapshot->equals(*empty));
  for (double x : seq) r.unseat(x);
  CHECK(r.aux().equals(*empty));
  CHECK(r.aux().to_string() == "tables {}");
  CHECK(snapshot->to_string() == "tables {0: 3, 1: 2, 4: 1}");
}

TEST_CASE("crp: what gibbs weighs for one customer") {
  Restaurant r = make_restaurant(1);
  for (double x : {0.0, 0.0, 1.0, 3.0}) r.seat(x);
  // Several customers at once: no fixed list.
  CHECK_FALSE(r.sp().enumerate(r.call().args()).has_value());
  // A customer sharing its table: the occupied tables and a new one at the smallest unused label.
  CHECK(labels(r.sp().enumerate_move(num(0), r.call().args())) == std::vector<double>{0, 1, 3, 2});
  // A customer alone: its own table is the new table, listed once.
  CHECK(labels(r.sp().enumerate_move(num(1), r.call().args())) == std::vector<double>{0, 1, 3});
  CHECK(labels(r.sp().enumerate_move(num(3), r.call().args())) == std::vector<double>{0, 1, 3});
}

TEST_CASE("make_crp absorbs a change of alpha: it weighs the seating by the Ewens formula and sets the new alpha") {
  const Sp& maker = builtin_sp("make_crp");
  CHECK(maker.can_absorb(0));
  Restaurant r = make_restaurant(1);
  for (double x : {0.0, 0.0, 1.0, 0.0, 2.0}) r.seat(x);
  // Tables of 3, 1, 1: alpha^3 2! 0! 0! Gamma(alpha) / Gamma(alpha + 5).
  auto ewens = [](double a) { return 3 * std::log(a) + std::lgamma(3) + std::lgamma(a) - std::lgamma(a + 5); };
  CHECK(Call(maker, {num(2.5)}).log_density(r.proc) == doctest::Approx(ewens(2.5)).epsilon(1e-12));
  CHECK(Call(maker, {num(0)}).log_density(r.proc) == -kInf);
  const double before = r.call().log_density(num(7));  // a new table: 1 / 6
  maker.incorporate(r.proc, Call(maker, {num(2.5)}).args());
  CHECK(before == doctest::Approx(std::log(1.0 / 6)));
  CHECK(r.call().log_density(num(7)) == doctest::Approx(std::log(2.5 / 7.5)));
  CHECK(r.aux().to_string() == "tables {0: 3, 1: 1, 2: 1}");  // the customers stay
  maker.incorporate(r.proc, Call(maker, {num(-1)}).args());  // invalid: scored -inf above, so the move is undone
  CHECK(r.call().log_density(num(7)) == doctest::Approx(std::log(2.5 / 7.5)));
}

TEST_CASE("crp: values that are not tables") {
  Restaurant r = make_restaurant(2);
  r.seat(0);
  for (const Value& x : {num(-1), num(0.5), num(kInf), num(std::nan("")), num(9007199254740992.0), Value(true)}) {
    CAPTURE(to_string(x));
    CHECK(r.call().log_density(x) == -kInf);
    r.sp().incorporate(x, r.call().args());  // ignored, as unincorporate ignores it
    r.sp().unincorporate(x, r.call().args());
  }
  CHECK(r.aux().to_string() == "tables {0: 1}");
}

// The largest alpha: every customer starts a table, and n + alpha stays finite.
TEST_CASE("crp with a huge alpha") {
  Restaurant r = make_restaurant(std::numeric_limits<double>::max());
  r.seat(0);
  CHECK(r.call().log_density(num(1)) == 0.0);
  CHECK(r.call().log_density(num(0)) == doctest::Approx(-std::log(std::numeric_limits<double>::max())));
  Rng rng(kSeed);
  CHECK(as_number(r.call().simulate(rng)) == 1);
}

TEST_CASE("crp errors") {
  const Sp& maker = builtin_sp("make_crp");
  Rng rng(kSeed);
  check_error([&] { Call(maker, {num(0)}).simulate(rng); }, ErrorKind::kDomain,
              "make_crp: argument 1 (alpha) is 0, but must be positive");
  check_error([&] { Call(maker, {num(kInf)}).simulate(rng); }, ErrorKind::kDomain,
              "make_crp: argument 1 (alpha) is inf, but must be finite");
  check_error([&] { Call(maker, {}).simulate(rng); }, ErrorKind::kArity, "make_crp: expected 1 argument, got 0");
  check_error([&] { Call(maker, {Value(make_nil())}).simulate(rng); }, ErrorKind::kType,
              "make_crp: argument 1 (alpha) must be a number, got nil");
  Restaurant r = make_restaurant(1);
  check_error([&] { Call(r.sp(), {num(1)}, &r.aux()).simulate(rng); }, ErrorKind::kArity,
              "crp: expected 0 arguments, got 1");
  try {  // unseating a customer never seated is a bug in the caller, not a user error
    r.unseat(0);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kInternal);
  }
}

}  // namespace vnt::test
