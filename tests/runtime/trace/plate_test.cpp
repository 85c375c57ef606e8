// Plates: the fused logistic scorer against the generic interpreter and the formula (ordinary rows, tails, the
// bias rule), plate columns, and which procedures plan_plate compiles (with the general path's errors otherwise).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <functional>
#include <memory>

#include "tests/runtime/trace/plate_fixture.hpp"

namespace vnt::plate_tests {
namespace {

using namespace plate_test;

// PlateEvaluator: fused and generic scoring.

/// The same rows as `p` with the fused scorer turned off: what the generic interpreter computes.
std::unique_ptr<PlateNode> generic_twin(const PlateNode& p) {
  auto program = std::make_shared<PlateProgram>(*p.program);
  program->fused = PlateProgram::Fused::kNone;
  auto g = std::make_unique<PlateNode>(p.expr, std::move(program), p.procedure, p.inputs);
  g->args = p.args;
  g->observed = p.observed;
  g->rows = p.rows;
  return g;
}

/// log p(y | w, x) with p = 1 / (1 + e^-z), by the textbook formula; w one longer than x has a bias first.
double by_hand(const Eigen::VectorXd& w, const Eigen::VectorXd& x, double y) {
  const bool bias = w.size() == x.size() + 1;
  const double z = (bias ? w[0] : 0.0) + w.tail(x.size()).dot(x);
  const double p = 1 / (1 + std::exp(-z));
  return y == 1 ? std::log(p) : std::log(1 - p);
}

TEST_CASE("the fused logistic scorer agrees with the generic interpreter and the formula on ordinary rows") {
  Engine e(3);
  test::run(e, kFused);
  Rng rng(8);
  std::vector<Eigen::VectorXd> xs;
  std::vector<double> ys;
  for (int i = 0; i < 60; ++i) {
    xs.push_back(Eigen::Vector2d(2 * rng.normal(), 2 * rng.normal()));
    ys.push_back(i % 3 == 0 ? 0.0 : 1.0);
    e.observe_apply("f", {make_vector(xs.back())}, Value(ys.back()));
  }
  PlateNode* p = last_plate(e);
  REQUIRE(p != nullptr);
  REQUIRE(p->program->fused == PlateProgram::Fused::kLogistic);
  CHECK(p->args[0].dense());
  auto g = generic_twin(*p);
  // With a bias (size 3) and without (size 2).
  const Eigen::VectorXd weights[] = {Eigen::Vector3d(0.3, -1.1, 0.7), Eigen::Vector3d(-2, 0.4, 1.9),
                                     Eigen::Vector2d(0.8, -0.6), Eigen::Vector2d(0, 0)};
  for (const Eigen::VectorXd& w : weights) {
    CAPTURE(w.transpose());
    const Value wv = make_vector(w);
    PlateEvaluator fused(*p, {&wv}), generic(*g, {&wv});
    std::vector<double> batch(p->rows), range(p->rows);
    std::vector<uint32_t> order(p->rows);
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(order.size()) - 1 - i;
    fused.rows(order.data(), order.size(), batch.data());
    fused.range(0, p->rows, range.data());
    double sum = 0;
    for (size_t i = 0; i < p->rows; ++i) {
      const double f = fused.row(i), gen = generic.row(i), hand = by_hand(w, xs[i], ys[i]);
      CHECK(std::isfinite(f));
      CHECK(close(f, hand, 1e-12));
      CHECK(close(gen, hand, 1e-12));
      CHECK(close(f, gen, 1e-12));
      CHECK(batch[p->rows - 1 - i] == f);
      CHECK(range[i] == f);
      sum += f;
    }
    CHECK(fused.sum() == sum);
    CHECK(close(generic.sum(), sum, 1e-12));
  }
}

TEST_CASE("flip bodies and boolean observed values take the fused scorer, with the scores and draws of 1/0 rows") {
  // What examples/embed does: (flip (linear_logistic w x)) observed at booleans. Such rows were kept generic
  // (a boolean observed column, a flip body), so they missed the fused scorer and 'proxy 'taylor.
  const char* bodies[] = {"bernoulli", "flip"};
  double totals[2][2] = {};
  for (int b = 0; b < 2; ++b) {
    for (int booleans = 0; booleans < 2; ++booleans) {
      CAPTURE(bodies[b]);
      CAPTURE(booleans);
      const std::string program = fmt::format(
          "[assume w (scope_include 'w 0 (multivariate_normal (zeros 3) (id_matrix 3)))]"
          "[assume f (lambda (x) ({} (linear_logistic w x)))]",
          bodies[b]);
      Pair pair(41);
      pair.run(program);
      Rng rng(9);
      for (int i = 0; i < 40; ++i) {
        const Value x = vec2(2 * rng.normal(), 2 * rng.normal());
        const bool y = i % 3 != 0;
        const Value v = booleans != 0 ? Value(y) : Value(y ? 1.0 : 0.0);
        pair.on.observe_apply("f", {x}, v);
        pair.off.observe_apply("f", {x}, v);
      }
      PlateNode* p = last_plate(pair.on);
      REQUIRE(p != nullptr);
      CHECK(p->program->fused == PlateProgram::Fused::kLogistic);
      CHECK(fused_logistic_rows(*p));
      CHECK(p->observed.dense());
      if (booleans != 0) CHECK(values_equal(p->observed.value(0), Value(false)));
      totals[b][booleans] = p->total;
      // The same chain as one family per row: same scores, same draws.
      const char* infer = "[infer (repeat 20 (do (mh w all 'drift 0.3 5) (subsampled_mh w all 7 0.05 'drift 0.3 5)))]";
      test::run(pair.on, infer);
      test::run(pair.off, infer);
      CHECK(vec(pair.on, "w") == vec(pair.off, "w"));
    }
  }
  CHECK(totals[0][1] == totals[0][0]);
  CHECK(totals[1][0] == totals[0][0]);
  CHECK(totals[1][1] == totals[0][0]);
}

TEST_CASE("in the tails the fused and the generic score are -softplus(-+z), finite where log(logistic(z)) is -inf") {
  Engine e(3);
  test::run(e, kFused);  // w = (0 0): every row has probability 1/2 at load
  const double zs[] = {40, -40, 800, -800};
  for (double z : zs)
    for (double y : {0.0, 1.0}) e.observe_apply("f", {vec2(z, 5)}, Value(y));
  PlateNode* p = last_plate(e);
  REQUIRE(p != nullptr);
  auto g = generic_twin(*p);
  const Value w = vec2(1, 0);  // no bias: z = x[0]
  PlateEvaluator fused(*p, {&w}), generic(*g, {&w});
  for (size_t i = 0; i < p->rows; ++i) {
    const double z = zs[i / 2], y = (i % 2 == 0) ? 0.0 : 1.0;
    CAPTURE(z);
    CAPTURE(y);
    const double expect = y == 1 ? -ref_softplus(-z) : -ref_softplus(z);
    const double f = fused.row(i), gen = generic.row(i);
    CHECK(std::isfinite(f));
    CHECK(f == doctest::Approx(expect).epsilon(1e-15));
    // y = 0 at z = 40 and 800 (logistic rounds to 1) and y = 1 at z = -800 (it underflows to 0): bernoulli asks
    // linear_logistic for its log-odds (Args::log_odds) instead of taking log(0).
    CHECK(std::abs(gen - f) <= 1e-12 * std::max(1.0, std::abs(f)));  // log(1) = 0 against -e^-40
  }
  CHECK(std::isfinite(fused.sum()));
  // So a row loads alike into a plate and as trace nodes (the general path), with the same log density.
  Pair q(3);
  q.run("[assume w (vector 1 0)] [assume f (lambda (x) (bernoulli (linear_logistic w x)))]");
  q.on.observe_apply("f", {vec2(40, 0)}, Value(0.0));
  CHECK(last_plate(q.on)->total == doctest::Approx(-40));
  q.off.observe_apply("f", {vec2(40, 0)}, Value(0.0));
  CHECK(q.off.trace().observations().size() == 1);
}

TEST_CASE("a row's change of log density is exact in both tails, and for tiny moves where a difference is not") {
  // Reference in long double: f(z) = -softplus(-z) if y = 1, -softplus(z) if y = 0.
  const auto f = [](long double z, double y) {
    const long double t = y == 1 ? -z : z;
    return -(std::max(t, 0.0L) + std::log1p(std::exp(-std::abs(t))));
  };
  for (double zf : {-800.0, -40.0, -3.0, -1e-8, 0.0, 2.5, 40.0, 800.0})
    for (double dz : {-5.0, -1e-3, 1e-3, 5.0})
      for (double y : {0.0, 1.0}) {
        CAPTURE(zf);
        CAPTURE(dz);
        CAPTURE(y);
        const double zt = zf + dz, got = logistic_log_density_change(zf, zt, y);
        const auto want = static_cast<double>(f(zt, y) - f(zf, y));
        CHECK((close(got, want, 1e-13) || std::abs(got - want) < 1e-300));
      }
  // A move of 1e-7: the change is (y - s) dz - s (1 - s) dz^2 / 2 to a relative 1e-13 (s = logistic(zf)), which
  // the difference of two densities of size 1 misses by about 1e-9.
  const double zf = 0.3, zt = zf + 1e-7, dz = zt - zf, s = 1 / (1 + std::exp(-zf));
  for (double y : {0.0, 1.0}) {
    CAPTURE(y);
    const double want = (y - s) * dz - s * (1 - s) * dz * dz / 2;
    CHECK(close(logistic_log_density_change(zf, zt, y), want, 1e-12));
    const double naive = logistic_log_density(zt, y) - logistic_log_density(zf, y);
    CHECK_FALSE(close(naive, want, 1e-12));
  }
}

TEST_CASE("linear_logistic's sizes in a plate: a bias if w is one longer, none if equal, else its kDomain error") {
  Engine e(3);
  test::run(e, "[assume w (vector 0.5 -1 2)] [assume f (lambda (x) (bernoulli (linear_logistic w x)))]");
  e.observe_apply("f", {vec2(0.3, 0.4)}, Value(1.0));
  e.observe_apply("f", {vec2(-1, 2)}, Value(0.0));
  PlateNode* p = last_plate(e);
  REQUIRE(p != nullptr);
  // The load used the bias: 0.5 - 0.3 + 0.8 and 0.5 + 1 + 4.
  CHECK(close(p->total, -ref_softplus(-1.0) - ref_softplus(5.5), 1e-14));
  const Value same = vec2(2, -1), bias = make_vector(Eigen::Vector3d(1, 2, -1));
  CHECK(close(PlateEvaluator(*p, {&same}).row(0), -ref_softplus(-(0.6 - 0.4)), 1e-14));
  CHECK(close(PlateEvaluator(*p, {&bias}).row(0), -ref_softplus(-(1 + 0.6 - 0.4)), 1e-14));
  const char* message =
      "linear_logistic: argument 1 has size {}, but argument 2 has size 2 (argument 1 must have the same size, or "
      "one more for a bias)";
  for (int size : {1, 4}) {
    const Value bad = make_vector(Eigen::VectorXd::Ones(size));
    try {
      PlateEvaluator(*p, {&bad}).row(0);
      FAIL("expected an error");
    } catch (const Error& err) {
      CHECK(err.kind() == ErrorKind::kDomain);
      CHECK(err.message() == fmt::format(fmt::runtime(message), size));
    }
  }
  // At load, with plates and without: the same error, and nothing attached.
  for (bool plates : {true, false}) {
    CAPTURE(plates);
    Engine b(3);
    b.set_plates(plates);
    test::run(b, "[assume w (vector 1 2 3 4)] [assume f (lambda (x) (bernoulli (linear_logistic w x)))]");
    const std::string before = test::fingerprint_of(b);
    const size_t nodes = b.trace().live_nodes();
    try {
      b.observe_apply("f", {vec2(0.3, 0.4)}, Value(1.0));
      FAIL("expected an error");
    } catch (const Error& err) {
      CHECK(err.kind() == ErrorKind::kDomain);
      CHECK(err.message() == fmt::format(fmt::runtime(message), 4));
      REQUIRE(err.has_span());
      CHECK(err.span().line == 1);
      CHECK(err.span().col == 62);  // the application (linear_logistic w x) in the lambda's body
    }
    CHECK(test::fingerprint_of(b) == before);
    CHECK(b.trace().live_nodes() == nodes);
    CHECK(b.directives().size() == 2);
  }
}

TEST_CASE("rows of different widths are kept generic and scored by the generic interpreter") {
  Engine e(3);
  test::run(e, "[assume w (vector 0.5 -1 2)] [assume f (lambda (x) (bernoulli (linear_logistic w x)))]");
  e.observe_apply("f", {vec2(0.3, 0.4)}, Value(1.0));                         // bias: z = 0.5 - 0.3 + 0.8
  e.observe_apply("f", {make_vector(Eigen::Vector3d(1, 1, 1))}, Value(0.0));  // no bias: z = 1.5
  PlateNode* p = last_plate(e);
  REQUIRE(p != nullptr);
  CHECK(!p->args[0].dense());
  CHECK(close(p->total, -ref_softplus(-1.0) - ref_softplus(1.5), 1e-14));
  CHECK(close(PlateEvaluator(*p, current_inputs(*p)).sum(), p->total, 1e-14));
}

TEST_CASE("a plate column stores numbers or equal-length vectors densely and anything else as values") {
  PlateColumn numbers;
  numbers.push(Value(1.5));
  numbers.push(Value(-2.0));
  CHECK(numbers.dense());
  CHECK(!numbers.vectors());
  CHECK(*numbers.row(1) == -2.0);
  numbers.push(vec2(1, 2));  // a vector among numbers: generic from now on, values kept
  CHECK(!numbers.dense());
  CHECK(values_equal(numbers.value(0), Value(1.5)));
  CHECK(values_equal(numbers.value(2), vec2(1, 2)));
  numbers.pop();  // popping the value that made it generic (a row that failed) makes it dense again
  CHECK(numbers.size() == 2);
  CHECK(numbers.dense());
  CHECK(*numbers.row(1) == -2.0);
  CHECK(values_equal(numbers.value(1), Value(-2.0)));
  numbers.push(Value(true));
  numbers.push(Value(3.0));
  numbers.pop();  // not the value that made it generic: still generic
  CHECK(!numbers.dense());
  CHECK(values_equal(numbers.value(2), Value(true)));

  PlateColumn booleans;  // dense as 1 and 0, given back as booleans
  booleans.push(Value(true));
  booleans.push(Value(false));
  CHECK(booleans.dense());
  CHECK(!booleans.vectors());
  CHECK(*booleans.row(0) == 1.0);
  CHECK(values_equal(booleans.value(1), Value(false)));
  booleans.push(Value(1.0));  // a number among booleans: generic, and each value stays what it was
  CHECK(!booleans.dense());
  CHECK(values_equal(booleans.value(0), Value(true)));
  CHECK(values_equal(booleans.value(2), Value(1.0)));
  booleans.pop();
  CHECK(booleans.dense());
  CHECK(values_equal(booleans.value(0), Value(true)));
  CHECK(*booleans.row(1) == 0.0);
  PlateColumn numbers_first;
  numbers_first.push(Value(1.0));
  numbers_first.push(Value(true));
  CHECK(!numbers_first.dense());
  CHECK(values_equal(numbers_first.value(1), Value(true)));

  PlateColumn vectors;
  const double x[] = {1, 2, 3, 4};
  vectors.push_vector(x, 2);
  vectors.push(vec2(3, 4));
  CHECK(vectors.dense());
  CHECK(vectors.width() == 2);
  CHECK(values_equal(vectors.value(1), vec2(3, 4)));
  vectors.pop();
  vectors.pop();
  vectors.push(Value(7.0));  // empty again: the next value decides the layout
  CHECK(vectors.dense());
  CHECK(!vectors.vectors());
  vectors.push_vector(x, 3);
  CHECK(!vectors.dense());
  CHECK(values_equal(vectors.value(1), make_vector(Eigen::Vector3d(1, 2, 3))));
  vectors.pop();
  vectors.pop();
  vectors.push_vector(x, 2);
  vectors.push(Value(false));
  vectors.pop();
  CHECK(vectors.dense());
  CHECK(vectors.vectors());
  CHECK(values_equal(vectors.value(0), vec2(1, 2)));
}

// ---------------------------------------------------------------------------------------------------------
// Which procedures plan_plate compiles.

struct PlanCase {
  const char* what;
  const char* program;  // defines f; a is a random choice read by its rows (directly or not)
  bool compiled;
  enum Args { kNumber, kNone, kVector } args = kNumber;
};

TEST_CASE("plan_plate compiles global lambdas of builtin applications ending in one random builtin, only those") {
  const char* a = "[assume a (normal 0 1)]";
  const PlanCase cases[] = {
      {"linear model", "[assume f (lambda (x) (normal (* a x) 0.5))]", true},
      {"no parameters", "[assume f (lambda () (normal a 1))]", true, PlanCase::kNone},
      {"fused logistic over a global computed from a",
       "[assume w (vector a 1)] [assume f (lambda (x) (bernoulli (linear_logistic w x)))]", true, PlanCase::kVector},
      {"an alias of a global lambda", "[assume g (lambda (x) (normal (* a x) 0.5))] [assume f g]", true},
      {"a deep tree of builtins and constants", "[assume f (lambda (x) (normal (+ a (* 2 x) (sqrt 4)) (exp 0)))]",
       true},
      {"a parameter shadowing a global (no inputs)", "[assume f (lambda (a) (normal a 1))]", true},
      {"if", "[assume f (lambda (x) (if (> x 0) (normal a 1) (normal (- 0 a) 1)))]", false},
      {"a compound procedure", "[assume g (lambda (m) (normal m 0.5))] [assume f (lambda (x) (g (* a x)))]", false},
      {"two random applications", "[assume f (lambda (x) (normal (normal (* a x) 1) 0.5))]", false},
      {"a lambda inside let", "[assume f (let ((s 0.5)) (lambda (x) (normal (* a x) s)))]", false},
      {"a procedure made by a procedure",
       "[assume mk (lambda (s) (lambda (x) (normal (* a x) s)))] [assume f (mk 0.5)]", false},
      {"a procedure chosen by if", "[assume f (if (> a -100) (lambda (x) (normal a 1)) (lambda (x) (normal a 2)))]",
       false},
      {"mem", "[assume f (mem (lambda (x) (normal (* a x) 0.5)))]", false},
      {"a builtin shadowed by a global",
       "[assume exp (lambda (u) (* 2 u))] [assume f (lambda (x) (normal (exp (* a x)) 0.5))]", false},
      {"scope_include", "[assume f (lambda (x) (scope_include 'obs x (normal (* a x) 0.5)))]", false},
  };
  for (const PlanCase& c : cases) {
    CAPTURE(std::string(c.what));
    Pair p(23);
    p.run(std::string(a) + c.program);
    CHECK(plan_plate(p.on.trace(), "f").has_value() == c.compiled);
    CHECK(!plan_plate(p.on.trace(), "no_such_name").has_value());
    Rng rng(6);
    for (int i = 0; i < 20; ++i) {
      const double x = rng.uniform() + 0.5, y = rng.uniform() - 0.5;
      std::vector<Value> args;
      if (c.args == PlanCase::kNumber) args.emplace_back(x);
      if (c.args == PlanCase::kVector) args.push_back(vec2(x, -x));
      const Value v(c.args == PlanCase::kVector ? (i % 2 == 0 ? 1.0 : 0.0) : y);
      p.on.observe_apply("f", args, v);
      p.off.observe_apply("f", args, v);
    }
    CHECK((last_plate(p.on) != nullptr) == c.compiled);
    CHECK(last_plate(p.off) == nullptr);
    if (!c.compiled) CHECK(test::fingerprint_of(p.on) == test::fingerprint_of(p.off));
    // Either way, inference gives the same values: the rows are scored by the same SPs.
    test::run(p.on, "[infer (mh default one 'drift 0.2 30)]");
    test::run(p.off, "[infer (mh default one 'drift 0.2 30)]");
    CHECK(number(p.on, "a") == number(p.off, "a"));
  }
}

struct ErrorCase {
  const char* what;
  const char* program;
  ErrorKind kind;
};

const ErrorCase kErrorCases[] = {
    {"deterministic body", "[assume f (lambda (x) (* a x))]", ErrorKind::kInference},
    {"unbound variable", "[assume f (lambda (x) (normal (* nosuch x) 1))]", ErrorKind::kName},
    {"too many arguments", "[assume f (lambda (x) (normal (* a x) 1 2))]", ErrorKind::kArity},
    {"bad parameter", "[assume f (lambda (x) (normal (* a x) (- 0 1)))]", ErrorKind::kDomain},
    {"bad type", "[assume f (lambda (x) (normal (* a 'q) 1))]", ErrorKind::kType},
    {"impossible value", "[assume f (lambda (x) (uniform_continuous 5 6))]", ErrorKind::kZeroProbability},
    // a number observed where the body draws vectors: the plate said "probability zero", the general path type error
    {"value of another kind", "[assume f (lambda (x) (multivariate_normal (vector a x) (id_matrix 2)))]",
     ErrorKind::kType},
};

/// What observe_apply of each error case raises: message, line:col and call frames, with plates and without.
struct Raised {
  std::string message, position, frames;
};

void for_each_error_case(const std::function<void(const ErrorCase&, const Raised&, const Raised&)>& check) {
  for (const ErrorCase& c : kErrorCases) {
    CAPTURE(std::string(c.what));
    Pair p(29);
    p.run(std::string("[assume a (normal 0 1)]\n") + c.program);
    Raised raised[2];
    for (int k = 0; k < 2; ++k) {
      Engine& e = k == 0 ? p.on : p.off;
      const std::string before = test::fingerprint_of(e);
      const size_t nodes = e.trace().live_nodes();
      try {
        e.observe_apply("f", {Value(1.0)}, Value(0.5));
        FAIL("expected an error");
      } catch (const Error& err) {
        CHECK(err.kind() == c.kind);
        raised[k].message = err.message();
        raised[k].position = fmt::format("{}:{}", err.span().line, err.span().col);
        for (const ErrorFrame& f : err.frames()) raised[k].frames += f.text + "\n";
      }
      CHECK(test::fingerprint_of(e) == before);
      CHECK(e.trace().live_nodes() == nodes);
      CHECK(e.directives().size() == 2);
    }
    check(c, raised[0], raised[1]);
  }
}

TEST_CASE("a body a plate cannot run, or that fails, gives the error of the general path") {
  for_each_error_case([](const ErrorCase&, const Raised& on, const Raised& off) {
    CHECK(on.message == off.message);
    CHECK(on.position == off.position);
  });
}

// observe_csv drops the frames on both paths (it rethrows with the row's position), so observe_apply is compared.
TEST_CASE("an error inside a plate's body has the call frame of the general path") {
  for_each_error_case([](const ErrorCase&, const Raised& on, const Raised& off) { CHECK(on.frames == off.frames); });
}

}  // namespace
}  // namespace vnt::plate_tests
