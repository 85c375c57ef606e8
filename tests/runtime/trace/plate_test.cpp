// Plates: the same moves as one family per row (decision by decision), the fused logistic scorer against the
// generic interpreter and the formula, which procedures plan_plate compiles, and plates in transactions,
// forget and exact restoration.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <fmt/format.h>
#include <limits>
#include <optional>

#include "runtime/infer/mh.hpp"
#include "runtime/infer/subsampled_mh.hpp"
#include "runtime/trace/plate.hpp"
#include "tests/support/engine_fixture.hpp"
#include "vnt/vnt.hpp"

namespace vnt {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

BlockSpec block(const char* scope, BlockSpec::Mode mode, const char* kernel = "mh") {
  BlockSpec s;
  s.scope = std::string(scope);
  s.mode = mode;
  s.kernel = std::string(kernel);
  return s;
}

/// The plate of the last directive, or nullptr if it took the general path.
PlateNode* last_plate(Engine& e) {
  if (e.directives().empty()) return nullptr;
  Node* root = e.directives().back().root;
  return root != nullptr && root->kind == NodeKind::kPlate ? as_plate(root) : nullptr;
}

/// fingerprint_of, also covering the rows of an observe_csv that took the general path (whose root is null).
std::string full_fingerprint(Engine& e) {
  std::vector<Node*> roots;
  for (const DirectiveRecord& r : e.directives()) {
    if (r.root != nullptr) roots.push_back(r.root);
    roots.insert(roots.end(), r.rows.begin(), r.rows.end());
  }
  return fingerprint(e.trace(), roots);
}

double number(Engine& e, const std::string& name) { return std::get<double>(e.report(name)); }
Eigen::VectorXd vec(Engine& e, const std::string& name) { return *std::get<VectorPtr>(e.report(name)); }

Value vec2(double a, double b) { return make_vector(Eigen::Vector2d(a, b)); }

/// log(1 + e^t), written independently of plate.cpp.
double softplus(double t) { return std::max(t, 0.0) + std::log1p(std::exp(-std::abs(t))); }

bool close(double a, double b, double rel) {
  return a == b || std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b));
}

// y_i ~ normal(0.7 x_i, 0.5), x_i ~ normal(0, 1): the rows of the non-fused linear model.
const char* kLinear =
    "[assume a (scope_include 'a 0 (normal 0 1))]"
    "[assume f (lambda (x) (normal (* a x) 0.5))]";

void load_linear(Engine& e, size_t n, uint64_t seed) {
  Rng rng(seed);
  for (size_t i = 0; i < n; ++i) {
    const double x = rng.normal();
    e.observe_apply("f", {Value(x)}, Value(0.7 * x + 0.5 * rng.normal()));
  }
}

// Logistic regression with a bias, as in examples/bayes_lr/synthetic.vnt: rows of 2 features.
const char* kLogistic =
    "[assume w (scope_include 'w 0 (multivariate_normal (zeros 3) (* 0.1 (id_matrix 3))))]"
    "[assume y_x (lambda (x) (bernoulli (linear_logistic w x)))]";

void load_logistic(Engine& e, size_t n, uint64_t seed) {
  Rng rng(seed);
  for (size_t i = 0; i < n; ++i) {
    const double x1 = rng.normal(), x2 = rng.normal();
    const double p = 1 / (1 + std::exp(-(0.5 + 1.5 * x1 - x2)));
    e.observe_apply("y_x", {vec2(x1, x2)}, Value(rng.uniform() < p ? 1.0 : 0.0));
  }
}

/// Two engines with one seed and one program, the first storing rows in a plate, the second one family per row.
struct Pair {
  Engine on, off;
  explicit Pair(uint64_t seed) : on(seed), off(seed) { off.set_plates(false); }
  void run(const std::string& program) {
    test::run(on, program);
    test::run(off, program);
  }
};

// ---------------------------------------------------------------------------------------------------------
// 1. The same moves as the general path.

TEST_CASE("a plate loads like one family per row: same draws from the trace's stream, one node instead of N") {
  Pair p(7);
  p.run(kLinear);
  const size_t before = p.on.trace().live_nodes();
  load_linear(p.on, 300, 1);
  load_linear(p.off, 300, 1);
  REQUIRE(last_plate(p.on) != nullptr);
  CHECK(last_plate(p.off) == nullptr);
  CHECK(last_plate(p.on)->rows == 300);
  CHECK(p.on.directives().size() == 3);
  CHECK(p.off.directives().size() == 302);
  CHECK(p.on.trace().live_nodes() == before + 1);
  CHECK(p.off.trace().live_nodes() > before + 300 * 5);
  CHECK(p.on.trace().rng().uniform() == p.off.trace().rng().uniform());
}

TEST_CASE("exact mh makes bitwise the same moves on a plate as on one family per row") {
  // Non-fused body: each row's log density comes from the same SP calls in both representations, and every
  // proposal is the same draw from the same stream, so a is bitwise equal as long as the decisions agree. The sums
  // may be associated differently (a plate's total is one term of the general scaffold's weight, and exact mh does
  // not partition a border whose sections are all plate rows, while one family per row is partitioned unless
  // allow_partition is off): a decision could then differ only if log u fell within ~1e-13 of the log acceptance
  // ratio, a chance of ~1e-13 per move, and with these seeds none does.
  for (bool partition : {true, false}) {
    CAPTURE(partition);
    Pair p(11);
    p.run(kLinear);
    load_linear(p.on, 300, 2);
    load_linear(p.off, 300, 2);
    REQUIRE(last_plate(p.on) != nullptr);
    MhOptions mo;
    mo.drift_sigma = 0.03;  // the posterior sd of a is about 0.03
    mo.allow_partition = partition;
    const BlockSpec spec = block("a", BlockSpec::Mode::kAll);
    int accepted = 0;
    for (int i = 0; i < 200; ++i) {
      const bool x = mh_transition(p.on.trace(), spec, mo);
      const bool y = mh_transition(p.off.trace(), spec, mo);
      REQUIRE(x == y);
      REQUIRE(number(p.on, "a") == number(p.off, "a"));
      accepted += x ? 1 : 0;
    }
    CHECK(accepted > 20);
    CHECK(accepted < 180);
    CHECK(p.on.trace().rng().uniform() == p.off.trace().rng().uniform());
  }
}

TEST_CASE("subsampled_mh makes bitwise the same moves on a plate as on one family per row") {
  // Row i is section i of a's border either way (plates come first among its children; one family per row adds
  // a's children in row order, and their sections are evaluated from values alone, so never re-linked), so the
  // same draws pick the same rows, whose l_i come from the same SP calls and are summed in the same order.
  Pair p(13);
  p.run(kLinear);
  load_linear(p.on, 300, 3);
  load_linear(p.off, 300, 3);
  SubsampledOptions so;
  so.epsilon = 0.05;
  so.batch = 20;
  so.drift_sigma = 0.03;
  SubsampledState s_on, s_off;
  const BlockSpec spec = block("a", BlockSpec::Mode::kAll, "subsampled_mh");
  for (int i = 0; i < 200; ++i) {
    const bool x = subsampled_mh_transition(p.on.trace(), spec, so, s_on);
    const bool y = subsampled_mh_transition(p.off.trace(), spec, so, s_off);
    REQUIRE(x == y);
    REQUIRE(number(p.on, "a") == number(p.off, "a"));
  }
  CHECK(s_on.stats.accepted == s_off.stats.accepted);
  CHECK(s_on.stats.accepted > 20);
  CHECK(s_on.stats.exact_transitions == 0);
  CHECK(s_on.stats.sections_visited == s_off.stats.sections_visited);  // the same rows, in the same order
  CHECK(s_on.stats.sections_visited < s_on.stats.sections_total);      // and it did subsample
}

TEST_CASE("the fused logistic scorer makes the decisions of the general path up to rounding") {
  // The fused scorer computes log p(y | w) as -softplus(-+z), the general path as log(logistic(z)) or
  // log1p(-logistic(z)): they differ by rounding only. The worst case is log1p(-p) near |z| = 8 (the largest
  // linear predictor here): 1 - p = 3e-4 inherits p's rounding error of 1e-16, an absolute error of 4e-13 in the
  // log, so each of the two sums over 300 rows (before and after a proposal) is off by < 1.2e-10. A decision can
  // differ only if log u lands within 2.4e-10 of the log acceptance ratio (for subsampled_mh, if a mean of the
  // l_i lands that close to the test's threshold): log u has density at most 1, so the chance is < 2.4e-10 per
  // move and < 5e-8 over the run, and the bound below (2 of 200) is loose. A flipped decision decouples the
  // chains for good (they propose from different states afterwards), so w is compared only while every decision
  // so far agreed, and must then be bitwise equal: the proposals are the same draws from the same stream.
  for (const char* kernel : {"mh", "subsampled_mh"}) {
    CAPTURE(std::string(kernel));
    Pair p(17);
    p.run(kLogistic);
    load_logistic(p.on, 300, 4);
    load_logistic(p.off, 300, 4);
    REQUIRE(last_plate(p.on) != nullptr);
    CHECK(last_plate(p.on)->program->fused == PlateProgram::Fused::kLogistic);
    CHECK(last_plate(p.off) == nullptr);
    MhOptions mo;
    mo.drift_sigma = 0.08;
    SubsampledOptions so;
    so.epsilon = 0.05;
    so.batch = 20;
    so.drift_sigma = 0.08;
    SubsampledState s_on, s_off;
    const BlockSpec spec = block("w", BlockSpec::Mode::kAll, kernel);
    const bool sub = std::string(kernel) == "subsampled_mh";
    auto step = [&](Engine& e, SubsampledState& state) {
      return sub ? subsampled_mh_transition(e.trace(), spec, so, state) : mh_transition(e.trace(), spec, mo);
    };
    int mismatches = 0, accepted = 0;
    for (int i = 0; i < 200; ++i) {
      const bool x = step(p.on, s_on), y = step(p.off, s_off);
      mismatches += x != y ? 1 : 0;
      accepted += x ? 1 : 0;
      if (mismatches == 0) CHECK((vec(p.on, "w") - vec(p.off, "w")).norm() == 0);
    }
    CHECK(mismatches <= 2);
    CHECK(accepted > 20);
    CHECK(accepted < 180);
    // Close at the end: which, as a flip decouples the chains, also asks for no flip at all (chance < 5e-8).
    CHECK((vec(p.on, "w") - vec(p.off, "w")).norm() < 1e-9);
  }
}

// ---------------------------------------------------------------------------------------------------------
// 2. PlateEvaluator: fused and generic scoring.

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

const char* kFused = "[assume w (vector 0 0)] [assume f (lambda (x) (bernoulli (linear_logistic w x)))]";

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

TEST_CASE("in the tails the fused score is -softplus(-+z), finite where log(logistic(z)) is -inf") {
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
  size_t infinite = 0;
  for (size_t i = 0; i < p->rows; ++i) {
    const double z = zs[i / 2], y = (i % 2 == 0) ? 0.0 : 1.0;
    CAPTURE(z);
    CAPTURE(y);
    const double expect = y == 1 ? -softplus(-z) : -softplus(z);
    const double f = fused.row(i), gen = generic.row(i);
    CHECK(std::isfinite(f));
    CHECK(f == doctest::Approx(expect).epsilon(1e-15));
    if (gen == -kInf)
      ++infinite;
    else
      CHECK(std::abs(gen - f) <= 1e-12 * std::max(1.0, std::abs(f)));  // log(1) = 0 against -e^-40
  }
  // y = 0 at z = 40 and 800 (logistic rounds to 1), y = 1 at z = -800 (it underflows to 0).
  CHECK(infinite == 3);
  CHECK(std::isfinite(fused.sum()));
  // So a row the general path refuses as impossible loads into a plate.
  Pair q(3);
  q.run("[assume w (vector 1 0)] [assume f (lambda (x) (bernoulli (linear_logistic w x)))]");
  q.on.observe_apply("f", {vec2(40, 0)}, Value(0.0));
  CHECK(last_plate(q.on)->total == doctest::Approx(-40));
  try {
    q.off.observe_apply("f", {vec2(40, 0)}, Value(0.0));
    FAIL("expected an error");
  } catch (const Error& err) {
    CHECK(err.kind() == ErrorKind::kZeroProbability);
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
  CHECK(close(p->total, -softplus(-1.0) - softplus(5.5), 1e-14));
  const Value same = vec2(2, -1), bias = make_vector(Eigen::Vector3d(1, 2, -1));
  CHECK(close(PlateEvaluator(*p, {&same}).row(0), -softplus(-(0.6 - 0.4)), 1e-14));
  CHECK(close(PlateEvaluator(*p, {&bias}).row(0), -softplus(-(1 + 0.6 - 0.4)), 1e-14));
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
    const std::string before = full_fingerprint(b);
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
    CHECK(full_fingerprint(b) == before);
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
  CHECK(close(p->total, -softplus(-1.0) - softplus(1.5), 1e-14));
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
  numbers.pop();
  CHECK(numbers.size() == 2);
  CHECK(values_equal(numbers.value(1), Value(-2.0)));

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
}

// ---------------------------------------------------------------------------------------------------------
// 3. Which procedures plan_plate compiles.

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
    if (!c.compiled) CHECK(full_fingerprint(p.on) == full_fingerprint(p.off));
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
      const std::string before = full_fingerprint(e);
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
      CHECK(full_fingerprint(e) == before);
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

// BUG (runtime/trace/plate.cpp, PlateEvaluator::generic, and runtime/engine/engine.cpp, score_new_rows): an error
// raised by an SP inside the body of a plate's procedure (arity, domain, type) gets the application's span but
// not the call frame the general path adds, "in call to 'f' at <observe_apply>:1:1", so observe_apply (and
// Runtime::observe_apply's rendered message) reports less than without plates. observe_csv drops the frames on
// both paths (it rethrows a new Error with the row prefix), so only observe_apply differs.
TEST_CASE("an error inside a plate's body has the call frame of the general path" * doctest::skip()) {
  for_each_error_case([](const ErrorCase&, const Raised& on, const Raised& off) { CHECK(on.frames == off.frames); });
}

// ---------------------------------------------------------------------------------------------------------
// 4. Transactions, forget and exact restoration.

/// Writes `text` to a file of the test's own directory and returns its absolute path.
std::string write_csv(const std::string& name, const std::string& text) {
  const std::filesystem::path dir = std::filesystem::path(VNT_BINARY_DIR) / "plate_test_data";
  std::filesystem::create_directories(dir);
  const std::filesystem::path path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

TEST_CASE("observe_csv with an impossible row fails naming path:line and leaves the trace as it was") {
  const std::string fused = write_csv("bad_bernoulli.csv", "y,x1,x2\n1,0.5,0.1\n0,-0.3,0.2\n2,0.1,0.1\n1,1,1\n");
  const std::string uniform = write_csv("bad_uniform.csv", "y,x1\n0.5,0\n1.5,1\n7,2\n3.2,3\n");
  struct Case {
    const char* program;
    std::string path;
    const char* value;
  } cases[] = {
      {"[assume w (vector 0.2 0.5 -0.5)] [assume f (lambda (x) (bernoulli (linear_logistic w x)))]", fused, "2"},
      {"[assume s (gamma 2 2)] [assume f (lambda (x) (uniform_continuous (lookup x 0) (+ (lookup x 0) 1 s)))]",
       uniform, "7"},
  };
  for (const Case& c : cases) {
    for (bool plates : {true, false}) {
      CAPTURE(c.path);
      CAPTURE(plates);
      Engine e(31);
      e.set_plates(plates);
      test::run(e, c.program);
      REQUIRE(plan_plate(e.trace(), "f").has_value());
      const std::string before = full_fingerprint(e);
      const size_t nodes = e.trace().live_nodes();
      try {
        test::run(e, "\n  d: [observe_csv f \"" + c.path + "\" y]", "csv.vnt");
        FAIL("expected an error");
      } catch (const Error& err) {
        CHECK(err.kind() == ErrorKind::kZeroProbability);
        CHECK(err.message() == fmt::format("observe_csv: row at {}:4: observe: {} has probability zero under (f ...)",
                                           c.path, c.value));
        REQUIRE(err.has_span());
        CHECK(err.span().file->name == "csv.vnt");
        CHECK(err.span().line == 2);
      }
      CHECK(full_fingerprint(e) == before);
      CHECK(e.trace().live_nodes() == nodes);
      CHECK(e.directives().size() == 2);
      // The label is free, and the name f can be forgotten: nothing holds it.
      test::run(e, "d: [predict 1] [forget d] [forget f]");
    }
  }
}

TEST_CASE("observe_apply: an impossible row is not appended to the plate, and later rows are") {
  Engine e(37);
  test::run(e, kFused);
  for (int i = 0; i < 10; ++i) e.observe_apply("f", {vec2(i, 1)}, Value(i % 2 == 0 ? 1.0 : 0.0));
  PlateNode* p = last_plate(e);
  REQUIRE(p != nullptr);
  const std::string before = full_fingerprint(e);
  const size_t nodes = e.trace().live_nodes();
  const double total = p->total;
  auto refused = [&](const Value& x, const Value& y, ErrorKind kind, const std::string& message) {
    try {
      e.observe_apply("f", {x}, y);
      FAIL("expected an error");
    } catch (const Error& err) {
      CHECK(err.kind() == kind);
      CHECK(err.message() == message);
    }
    CHECK(p->rows == 10);
    CHECK(p->args[0].size() == 10);
    CHECK(p->observed.size() == 10);
    CHECK(p->total == total);
    CHECK(p->total_valid);
    CHECK(full_fingerprint(e) == before);
    CHECK(e.trace().live_nodes() == nodes);
    CHECK(e.directives().size() == 3);
  };
  refused(vec2(1, 1), Value(2.0), ErrorKind::kZeroProbability, "observe: 2 has probability zero under (f ...)");
  // A number where the row needs a vector: a type error, after which the column is no longer dense.
  refused(Value(1.0), Value(1.0), ErrorKind::kType, "linear_logistic: argument 2 must be a vector, got a number");
  e.observe_apply("f", {vec2(0.5, 2)}, Value(1.0));
  e.observe_apply("f", {vec2(-3, 2)}, Value(0.0));
  CHECK(e.directives().size() == 3);
  CHECK(p->rows == 12);
  REQUIRE(p->total_valid);
  CHECK(close(p->total, PlateEvaluator(*p, current_inputs(*p)).sum(), 1e-14));
  CHECK(close(p->total, total - 2 * std::log(2.0), 1e-14));  // w = 0: each new row has probability 1/2

  // An impossible first row attaches nothing.
  const std::string before_new = full_fingerprint(e);
  const size_t nodes_new = e.trace().live_nodes();
  test::run(e, "[assume g (lambda (x) (normal x 1))]");
  const size_t directives = e.directives().size();
  CHECK_THROWS_AS(e.observe_apply("g", {Value(0.0)}, vec2(1, 2)), Error);
  CHECK(e.directives().size() == directives);
  CHECK(e.trace().live_nodes() == nodes_new + 1);
  test::run(e, "[forget g]");
  CHECK(full_fingerprint(e) == before_new);
  CHECK(e.trace().live_nodes() == nodes_new);
}

TEST_CASE("forget removes a plate; the globals it reads cannot be forgotten before it") {
  const std::string path = write_csv("good.csv", "y,x1,x2\n1,0.5,0.1\n0,-0.3,0.2\n1,0.1,0.1\n1,1,1\n");
  Engine e(41);
  test::run(e, kFused);
  const std::string before = full_fingerprint(e);
  const size_t nodes = e.trace().live_nodes();
  test::run(e, "d: [observe_csv f \"" + path + "\" y]");
  PlateNode* p = last_plate(e);
  REQUIRE(p != nullptr);
  CHECK(p->rows == 4);
  CHECK(e.trace().live_nodes() == nodes + 1);
  for (const char* name : {"w", "f"}) {
    try {
      test::run(e, fmt::format("[forget {}]", name));
      FAIL("expected an error");
    } catch (const Error& err) {
      CHECK(err.kind() == ErrorKind::kInference);
      CHECK(err.message() == fmt::format("forget: '{}' is still used by other directives", name));
    }
  }
  test::run(e, "[forget d]");
  CHECK(e.trace().live_nodes() == nodes);
  CHECK(full_fingerprint(e) == before);
  CHECK(e.trace().global("w")->children.empty());
  CHECK(e.trace().global("w")->plate_children == 0);
  test::run(e, "[forget f] [forget w]");
  CHECK(e.directives().empty());
}

void check_report_refused(bool plates) {
  const std::string path = write_csv("good_report.csv", "y,x1,x2\n1,0.5,0.1\n0,-0.3,0.2\n");
  Engine e(41);
  e.set_plates(plates);
  test::run(e, kFused);
  test::run(e, "d: [observe_csv f \"" + path + "\" y]");
  CHECK((last_plate(e) != nullptr) == plates);
  try {
    e.report("d");
    FAIL("expected an error");
  } catch (const Error& err) {
    CHECK(err.kind() == ErrorKind::kName);
    CHECK(err.message() == "'d' labels a bulk observation, which has no value");
  }
}

/// Loads two rows of f, an alias of the global lambda g, then tries to forget f; returns the error, if any.
std::optional<std::string> forget_alias(Engine& e) {
  test::run(e, "[assume a (normal 0 1)] [assume g (lambda (x) (normal (* a x) 0.5))] [assume f g]");
  e.observe_apply("f", {Value(1.0)}, Value(0.5));
  e.observe_apply("f", {Value(2.0)}, Value(0.5));
  try {
    test::run(e, "[forget f]");
  } catch (const Error& err) {
    return err.message();
  }
  return std::nullopt;
}

TEST_CASE("forgetting an alias of the procedure of rows kept one family per row is refused") {
  Engine e(5);
  e.set_plates(false);
  CHECK(forget_alias(e) == "forget: 'f' is still used by other directives");
}

// BUG (runtime/trace/plate.cpp plan_plate, with runtime/engine/engine.cpp Engine::forget and observe_apply):
// plan_plate follows f's lookup to g's constant node and makes the plate a child of that node only, so f's own
// root (the lookup) has no children and [forget f] succeeds, where one family per row refuses it (each row looks
// f up). Afterwards observe_apply("f", ...) still appends to the plate (the last directive's `bulk` is "f"), so
// rows of an unbound name are accepted (a third row is added here) instead of the kName error "unbound symbol 'f'".
TEST_CASE("forgetting an alias of a plate's procedure is refused, as without plates" * doctest::skip()) {
  Engine e(5);
  CHECK(forget_alias(e) == "forget: 'f' is still used by other directives");
  REQUIRE(last_plate(e) != nullptr);
  CHECK_THROWS_AS(e.observe_apply("f", {Value(3.0)}, Value(0.5)), Error);
  CHECK(last_plate(e)->rows == 2);
}

TEST_CASE("report of an observe_csv label says that it has no value") { check_report_refused(false); }

// BUG (runtime/engine/engine.cpp, Engine::report): it refuses a bulk observation by `root == nullptr`, but an
// observe_csv stored as a plate has the plate as its root, so report("d") returns the plate's value (nil) instead
// of the kName error of the general path.
TEST_CASE("report of an observe_csv label stored as a plate says that it has no value" * doctest::skip()) {
  check_report_refused(true);
}

TEST_CASE("Runtime::observe_apply joins rows into a plate: an impossible row is refused, later rows go on") {
  vnt::Options o;
  o.seed = 61;
  vnt::Runtime rt(o);
  rt.execute(kLinear);
  Engine e(61);
  test::run(e, kLinear);
  Rng rng(10);
  for (int i = 0; i < 30; ++i) {
    const double x = rng.normal(), y = 0.7 * x + 0.5 * rng.normal();
    rt.observe_apply("f", {vnt::Datum(x)}, vnt::Datum(y));
    e.observe_apply("f", {Value(x)}, Value(y));
  }
  REQUIRE(last_plate(e) != nullptr);
  try {
    rt.observe_apply("f", {vnt::Datum(1.0)}, vnt::Datum(Eigen::VectorXd(Eigen::Vector2d(1, 2))));
    FAIL("expected an error");
  } catch (const vnt::RuntimeError& err) {
    CHECK(err.kind() == "zero probability");
    CHECK(err.message() == "observe: [1 2] has probability zero under (f ...)");
  }
  // The failed row drew from the trace's stream (as one family per row would have, before constraining it).
  CHECK_THROWS_AS(e.observe_apply("f", {Value(1.0)}, vec2(1, 2)), Error);
  for (int i = 0; i < 10; ++i) {
    const double x = rng.normal(), y = 0.7 * x + 0.5 * rng.normal();
    rt.observe_apply("f", {vnt::Datum(x)}, vnt::Datum(y));
    e.observe_apply("f", {Value(x)}, Value(y));
  }
  CHECK(last_plate(e)->rows == 40);
  // The same trace and stream as the engine's, so the same moves.
  rt.infer("(mh a all 'drift 0.05 50)");
  test::run(e, "[infer (mh a all 'drift 0.05 50)]");
  CHECK(rt.report("a").as_double() == number(e, "a"));
}

const char* kTwoInputs =
    "[assume mu (normal 0 1)]"
    "[assume sig (gamma 2 2)]"
    "[assume f (lambda () (normal mu sig))]";

void load_two_inputs(Engine& e, size_t n) {
  Rng rng(9);
  for (size_t i = 0; i < n; ++i) e.observe_apply("f", {}, Value(0.3 + 0.8 * rng.normal()));
}

TEST_CASE("a rejected mh move on a block whose scaffold holds the plate restores the trace exactly") {
  Engine e(43);
  test::run(e, kTwoInputs);
  load_two_inputs(e, 40);
  PlateNode* p = last_plate(e);
  REQUIRE(p != nullptr);
  CHECK(p->inputs.size() == 2);
  const BlockSpec all = block("default", BlockSpec::Mode::kAll);
  for (bool drift : {false, true}) {
    CAPTURE(drift);
    MhOptions mo;
    if (drift) mo.drift_sigma = 0.3;
    mo.decision = MhOptions::Decision::kReject;
    const std::string before = full_fingerprint(e);
    const double total = p->total, mu = number(e, "mu"), sig = number(e, "sig");
    REQUIRE(p->total_valid);
    for (int i = 0; i < 5; ++i) CHECK(!mh_transition(e.trace(), all, mo));
    CHECK(full_fingerprint(e) == before);
    CHECK(number(e, "mu") == mu);
    CHECK(number(e, "sig") == sig);
    CHECK(p->total == total);  // bitwise: restored from the Db, not rescored
    CHECK(p->total_valid);
    mo.decision = MhOptions::Decision::kAccept;
    CHECK(mh_transition(e.trace(), all, mo));
    CHECK(number(e, "mu") != mu);
    CHECK(p->total_valid);
    CHECK(close(p->total, PlateEvaluator(*p, current_inputs(*p)).sum(), 1e-14));
  }
  // Metropolis decisions: after each move the cached total is that of the current inputs.
  MhOptions mo;
  mo.drift_sigma = 0.2;
  int accepted = 0;
  for (int i = 0; i < 100; ++i) {
    const std::string before = full_fingerprint(e);
    const double total = p->total;
    if (mh_transition(e.trace(), all, mo)) {
      ++accepted;
    } else {
      CHECK(full_fingerprint(e) == before);
      CHECK(p->total == total);
    }
    CHECK(close(plate_total(*p), PlateEvaluator(*p, current_inputs(*p)).sum(), 1e-12));
  }
  CHECK(accepted > 5);
  CHECK(accepted < 95);
}

TEST_CASE("a proposal under which a plate row raises a domain error is rejected and restored exactly") {
  // t may drift below zero, where (normal mu t) raises a kDomain error while the plate is rescored.
  for (bool partition : {true, false}) {
    CAPTURE(partition);
    Engine e(47);
    test::run(e, "[assume mu (normal 0 1)] [assume t (scope_include 't 0 (normal 1 0.2))]"
                 "[assume f (lambda () (normal mu t))]");
    REQUIRE(number(e, "t") > 0);
    load_two_inputs(e, 30);
    PlateNode* p = last_plate(e);
    REQUIRE(p != nullptr);
    MhOptions mo;
    mo.drift_sigma = 1.5;
    mo.allow_partition = partition;
    const BlockSpec spec = block("t", BlockSpec::Mode::kAll);
    int rejected = 0;
    for (int i = 0; i < 60; ++i) {
      const std::string before = full_fingerprint(e);
      const double t = number(e, "t");
      if (!mh_transition(e.trace(), spec, mo)) {
        ++rejected;
        CHECK(full_fingerprint(e) == before);
        CHECK(number(e, "t") == t);
      }
      CHECK(number(e, "t") > 0);
      CHECK(close(plate_total(*p), PlateEvaluator(*p, current_inputs(*p)).sum(), 1e-12));
    }
    CHECK(rejected > 20);  // with t near 1, about a quarter of the proposals are negative
  }
}

TEST_CASE("after accepted subsampled moves the plate's total is recomputed before the general path uses it") {
  Engine e(53);
  test::run(e, kLinear);
  load_linear(e, 200, 7);
  PlateNode* p = last_plate(e);
  REQUIRE(p != nullptr);
  SubsampledOptions so;
  so.epsilon = 0.2;
  so.batch = 5;
  so.drift_sigma = 0.05;
  SubsampledState state;
  bool invalidated = false;
  for (int i = 0; i < 100; ++i) {
    subsampled_mh_transition(e.trace(), block("a", BlockSpec::Mode::kAll, "subsampled_mh"), so, state);
    invalidated |= !p->total_valid;
    if (p->total_valid) CHECK(close(p->total, PlateEvaluator(*p, current_inputs(*p)).sum(), 1e-10));
  }
  CHECK(invalidated);
  CHECK(state.stats.sections_visited < state.stats.sections_total);
  // The general scaffold (a block with another choice) scores the plate from the current a.
  test::run(e, "[assume z (normal 0 1)]");
  MhOptions mo;
  mo.drift_sigma = 0.05;
  mo.decision = MhOptions::Decision::kReject;
  const std::string before = full_fingerprint(e);
  mh_transition(e.trace(), block("default", BlockSpec::Mode::kAll), mo);
  CHECK(full_fingerprint(e) == before);
  REQUIRE(p->total_valid);
  CHECK(close(p->total, PlateEvaluator(*p, current_inputs(*p)).sum(), 1e-12));
}

// b = 2a is computed in a local section of a's border (the lookup of a in b's family), and the plate reads a and
// b. With one family per row every row meets b's section, which the partition refuses; the plate's rows meet it
// too and must be refused as well (or scored with a and b both proposed).
const char* kBorderAndChild =
    "[assume a (scope_include 'a 0 (normal 0 1))] [assume b (* 2 a)]"
    "[assume f (lambda (x) (normal (+ a (* b x)) 0.5))]";

TEST_CASE("a plate that reads the border and a value computed from it: the general scaffold as without plates") {
  Pair p(59);
  p.run(kBorderAndChild);
  load_linear(p.on, 50, 8);
  load_linear(p.off, 50, 8);
  REQUIRE(last_plate(p.on) != nullptr);
  CHECK(last_plate(p.on)->inputs.size() == 2);
  Engine refused(59);  // a separate engine: subsampled_mh splits a stream off the trace's before it refuses
  refused.set_plates(false);
  test::run(refused, kBorderAndChild);
  load_linear(refused, 50, 8);
  SubsampledOptions so;
  SubsampledState state;
  try {
    subsampled_mh_transition(refused.trace(), block("a", BlockSpec::Mode::kAll, "subsampled_mh"), so, state);
    FAIL("expected an error");
  } catch (const Error& err) {
    CHECK(err.kind() == ErrorKind::kInference);
    CHECK(err.message().find("two children of the border meet in one local section") != std::string::npos);
  }
  MhOptions mo;
  mo.drift_sigma = 0.05;
  mo.allow_partition = false;
  const BlockSpec spec = block("a", BlockSpec::Mode::kAll);
  for (int i = 0; i < 300; ++i) {
    REQUIRE(mh_transition(p.on.trace(), spec, mo) == mh_transition(p.off.trace(), spec, mo));
    REQUIRE(number(p.on, "a") == number(p.off, "a"));
  }
}

// BUG (runtime/infer/subsampled_mh.cpp, Transition::start_plate and check_section): the partition does not see
// that the plate's rows meet b's local section. start_plate refuses an input only if it is resampled in the
// global section or a direct child of the border; b is a grandchild (border -> lookup -> b). check_section for
// b's section skips the plate's parent a because it is the border. So b's section detaches and regenerates the
// whole plate (weight total(a', b') - total(a, b)) and the plate's rows are scored again as sections (total(a',
// b') - total(a, b'), with b already proposed): exact mh (mh_transition through partitioned_mh_transition)
// decides differently from the general scaffold (first at move 89 here), and subsampled_mh runs instead of
// refusing the scope. Over 40 000 moves of drift 0.03 on this model (seed 61), exact mh through the partition
// gives a posterior mean of a of 0.206 (sd 0.027) against 0.2536 (sd 0.0296) analytically, which the general
// scaffold reproduces (0.2533). Expected: NotPartitionable in both places, as without plates.
TEST_CASE("a plate that reads the border and a value computed from it is refused by the partition" * doctest::skip()) {
  Engine part(59), general(59);
  test::run(part, kBorderAndChild);
  test::run(general, kBorderAndChild);
  load_linear(part, 50, 8);
  load_linear(general, 50, 8);
  SubsampledOptions so;
  so.epsilon = 0.05;
  so.batch = 10;
  so.drift_sigma = 0.05;
  SubsampledState state;
  Engine sub(59);
  test::run(sub, kBorderAndChild);
  load_linear(sub, 50, 8);
  CHECK_THROWS_AS(subsampled_mh_transition(sub.trace(), block("a", BlockSpec::Mode::kAll, "subsampled_mh"), so, state),
                  Error);
  MhOptions partitioned, scaffold;
  partitioned.drift_sigma = scaffold.drift_sigma = 0.05;
  scaffold.allow_partition = false;
  const BlockSpec spec = block("a", BlockSpec::Mode::kAll);
  for (int i = 0; i < 300; ++i) {
    CAPTURE(i);
    REQUIRE(mh_transition(part.trace(), spec, partitioned) == mh_transition(general.trace(), spec, scaffold));
    REQUIRE(number(part, "a") == number(general, "a"));
  }
}

}  // namespace
}  // namespace vnt
