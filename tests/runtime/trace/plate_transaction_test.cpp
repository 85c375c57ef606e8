// Plates in transactions: an impossible row leaves the trace as it was (observe_csv, observe_apply, the public
// API), forget removes a plate and frees its globals, and rejected moves restore the trace exactly.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <random>

#include "runtime/infer/mh.hpp"
#include "runtime/infer/subsampled_mh.hpp"
#include "tests/runtime/trace/plate_fixture.hpp"
#include "vnt/vnt.hpp"

namespace vnt::plate_transaction_tests {
namespace {

using namespace plate_test;

/// Writes `text` to a file of the test's own directory and returns its absolute path. CTest runs the test cases
/// as parallel processes, and two of them write one file: a temporary file renamed into place means a reader never
/// sees it truncated (it did, and failed with an empty file).
std::string write_csv(const std::string& name, const std::string& text) {
  const std::filesystem::path dir = std::filesystem::path(VNT_BINARY_DIR) / "plate_test_data";
  std::filesystem::create_directories(dir);
  const std::filesystem::path path = dir / name;
  const std::filesystem::path temporary = dir / fmt::format("{}.{}.tmp", name, std::random_device{}());
  std::ofstream(temporary) << text;
  std::filesystem::rename(temporary, path);
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
      const std::string before = test::fingerprint_of(e);
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
      CHECK(test::fingerprint_of(e) == before);
      CHECK(e.trace().live_nodes() == nodes);
      CHECK(e.directives().size() == 2);
      // The label is free, and the name f can be forgotten: nothing holds it.
      test::run(e, "d: [predict 1] [forget d] [forget f]");
    }
  }
}

// test::fingerprint_of took every directive's root, and an observe_csv kept one family per row has none (it
// crashed on the null root); it must cover the rows instead.
TEST_CASE("fingerprint_of covers the rows of an observe_csv stored without plates") {
  const std::string a = write_csv("rows_a.csv", "y,x\n0.5,1\n1.5,2\n");
  const std::string b = write_csv("rows_b.csv", "y,x\n0.5,1\n1.25,2\n");
  auto load = [](const std::string& path) {
    auto e = std::make_unique<Engine>(5);
    e->set_plates(false);
    test::run(*e, "[assume m (normal 0 1)] [assume f (lambda (x) (normal (* m (lookup x 0)) 1))]");
    test::run(*e, "d: [observe_csv f \"" + path + "\" y]");
    REQUIRE(e->directives().back().root == nullptr);
    return e;
  };
  std::unique_ptr<Engine> ea = load(a), eb = load(b), ea2 = load(a);
  CHECK(test::fingerprint_of(*ea) == test::fingerprint_of(*ea2));
  CHECK(test::fingerprint_of(*ea) != test::fingerprint_of(*eb));  // the observed values are part of it
  CHECK(test::inconsistent_nodes(*ea) == 0);
  test::run(*ea, "[forget d]");
  CHECK(test::fingerprint_of(*ea).find("obs") == std::string::npos);
}

TEST_CASE("observe_apply: an impossible row is not appended to the plate, and later rows are") {
  Engine e(37);
  test::run(e, kFused);
  for (int i = 0; i < 10; ++i) e.observe_apply("f", {vec2(i, 1)}, Value(i % 2 == 0 ? 1.0 : 0.0));
  PlateNode* p = last_plate(e);
  REQUIRE(p != nullptr);
  const std::string before = test::fingerprint_of(e);
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
    CHECK(test::fingerprint_of(e) == before);
    CHECK(e.trace().live_nodes() == nodes);
    CHECK(e.directives().size() == 3);
  };
  refused(vec2(1, 1), Value(2.0), ErrorKind::kZeroProbability, "observe: 2 has probability zero under (f ...)");
  // A number where the row needs a vector, or a vector of another size: a type error, and the column is dense
  // again, so the rows keep the fused scorer ('proxy 'taylor drew other numbers after such a failure).
  REQUIRE(p->args[0].dense());
  refused(Value(1.0), Value(1.0), ErrorKind::kType, "linear_logistic: argument 2 must be a vector, got a number");
  CHECK(p->args[0].dense());
  refused(make_vector(Eigen::Vector3d(1, 2, 3)), Value(1.0), ErrorKind::kDomain,
          "linear_logistic: argument 1 has size 2, but argument 2 has size 3 (argument 1 must have the same size, "
          "or one more for a bias)");
  CHECK(p->args[0].dense());
  refused(vec2(1, 1), make_string("y"), ErrorKind::kZeroProbability,
          "observe: \"y\" has probability zero under (f ...)");
  CHECK(p->observed.dense());
  e.observe_apply("f", {vec2(0.5, 2)}, Value(1.0));
  e.observe_apply("f", {vec2(-3, 2)}, Value(0.0));
  CHECK(e.directives().size() == 3);
  CHECK(p->rows == 12);
  REQUIRE(p->total_valid);
  CHECK(close(p->total, PlateEvaluator(*p, current_inputs(*p)).sum(), 1e-14));
  CHECK(close(p->total, total - 2 * std::log(2.0), 1e-14));  // w = 0: each new row has probability 1/2

  // An impossible first row attaches nothing.
  const std::string before_new = test::fingerprint_of(e);
  const size_t nodes_new = e.trace().live_nodes();
  test::run(e, "[assume g (lambda (x) (normal x 1))]");
  const size_t directives = e.directives().size();
  CHECK_THROWS_AS(e.observe_apply("g", {Value(0.0)}, vec2(1, 2)), Error);
  CHECK(e.directives().size() == directives);
  CHECK(e.trace().live_nodes() == nodes_new + 1);
  test::run(e, "[forget g]");
  CHECK(test::fingerprint_of(e) == before_new);
  CHECK(e.trace().live_nodes() == nodes_new);
}

TEST_CASE("forget removes a plate, the globals it reads cannot be forgotten before it") {
  const std::string path = write_csv("good.csv", "y,x1,x2\n1,0.5,0.1\n0,-0.3,0.2\n1,0.1,0.1\n1,1,1\n");
  Engine e(41);
  test::run(e, kFused);
  const std::string before = test::fingerprint_of(e);
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
      CHECK(err.message().starts_with(fmt::format("forget: '{}' is still used by other directives (", name)));
    }
  }
  test::run(e, "[forget d]");
  CHECK(e.trace().live_nodes() == nodes);
  CHECK(test::fingerprint_of(e) == before);
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
  CHECK(forget_alias(e).value_or("") == "forget: 'f' is still used by other directives (<observe_apply>:1:2 reads it)");
}

// The plate hangs from f's own node (the lookup of g), as each row's lookup of f would.
TEST_CASE("forgetting an alias of a plate's procedure is refused, as without plates") {
  Engine e(5);
  CHECK(forget_alias(e).value_or("") == "forget: 'f' is still used by other directives (<observe_apply>:1:2 reads it)");
  REQUIRE(last_plate(e) != nullptr);
  // f is still bound, and later rows join the plate.
  e.observe_apply("f", {Value(3.0)}, Value(0.5));
  CHECK(last_plate(e)->rows == 3);
  CHECK_THROWS_AS(test::run(e, "[forget f]"), Error);
  CHECK_THROWS_AS(test::run(e, "[forget g]"), Error);
}

TEST_CASE("report of an observe_csv label says that it has no value") { check_report_refused(false); }

TEST_CASE("report of an observe_csv label stored as a plate says that it has no value") {
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
    CHECK(err.kind() == "type error");  // as the general path says it
    CHECK(err.message() == "observe: [1 2] is a vector of length 2, but (f ...) draws a number");
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
    const std::string before = test::fingerprint_of(e);
    const double total = p->total, mu = number(e, "mu"), sig = number(e, "sig");
    REQUIRE(p->total_valid);
    for (int i = 0; i < 5; ++i) CHECK(!mh_transition(e.trace(), all, mo));
    CHECK(test::fingerprint_of(e) == before);
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
    const std::string before = test::fingerprint_of(e);
    const double total = p->total;
    if (mh_transition(e.trace(), all, mo)) {
      ++accepted;
    } else {
      CHECK(test::fingerprint_of(e) == before);
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
      const std::string before = test::fingerprint_of(e);
      const double t = number(e, "t");
      if (!mh_transition(e.trace(), spec, mo)) {
        ++rejected;
        CHECK(test::fingerprint_of(e) == before);
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
  SubsampledOptions so{.batch = 5, .epsilon = 0.2, .drift_sigma = 0.05};
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
  const std::string before = test::fingerprint_of(e);
  mh_transition(e.trace(), block("default", BlockSpec::Mode::kAll), mo);
  CHECK(test::fingerprint_of(e) == before);
  REQUIRE(p->total_valid);
  CHECK(close(p->total, PlateEvaluator(*p, current_inputs(*p)).sum(), 1e-12));
}

// A list of value columns observes vectors, one family per row even where a plate could run the procedure (f
// below). An impossible row (a cell of inf, outside multivariate_normal's support) takes back the rows before it.
TEST_CASE("observe_csv of a list of value columns: one family per row, all or nothing, forgotten by its label") {
  const std::string bad = write_csv("columns_bad.csv", "a,x2,b,x1\n0,1,0,2\n1,2,1,3\n2,inf,2,4\n3,4,3,5\n");
  const std::string good = write_csv("columns_good.csv", "a,x2,b,x1\n0,1,0,2\n1,2,1,3\n2,3,2,4\n");
  for (bool plates : {true, false}) {
    CAPTURE(plates);
    Engine e(43);
    e.set_plates(plates);
    test::run(e, "[assume mu (normal 0 1)] [assume f (lambda (x) (multivariate_normal (+ mu x) (id_matrix 2)))]");
    REQUIRE(plan_plate(e.trace(), "f").has_value());
    const std::string before = test::fingerprint_of(e);
    const size_t nodes = e.trace().live_nodes();
    try {
      test::run(e, "\n  d: [observe_csv f \"" + bad + "\" (x1 x2)]", "csv.vnt");
      FAIL("expected an error");
    } catch (const Error& err) {
      CHECK(err.kind() == ErrorKind::kZeroProbability);
      CHECK(err.message() ==
            fmt::format("observe_csv: row at {}:4: observe: [4 inf] has probability zero under (f ...)", bad));
      REQUIRE(err.has_span());
      CHECK(err.span().line == 2);
    }
    CHECK(test::fingerprint_of(e) == before);
    CHECK(e.trace().live_nodes() == nodes);
    CHECK(e.directives().size() == 2);

    test::run(e, "d: [observe_csv f \"" + good + "\" (x1 x2)]");
    const DirectiveRecord& r = e.directives().back();
    CHECK(r.root == nullptr);
    REQUIRE(r.rows.size() == 3);
    // Row 1 observes (x1 x2) = (3, 2), in the order written.
    REQUIRE(is_vector(r.rows[1]->value));
    CHECK(*std::get<VectorPtr>(r.rows[1]->value) == Eigen::Vector2d(3, 2));
    test::run(e, "[forget d]");
    CHECK(test::fingerprint_of(e) == before);
    CHECK(e.trace().live_nodes() == nodes);
    test::run(e, "[forget f]");
  }
}

// Each row observes what observe_apply of (f (vector a b)) at (vector x1 x2) observes: the value's cells in the
// order written, the procedure's vector the other cells in file order. Named by index or string, the columns of the
// same rows in another order give the same trace; in the other order, another one.
TEST_CASE("observe_csv of a list of value columns observes the rows that observe_apply would") {
  const std::string mixed = write_csv("columns_mixed.csv", "a,x2,b,x1\n0,1,0.5,2\n1,2,1.5,3\n");
  const std::string sorted = write_csv("columns_sorted.csv", "x1,x2,a,b\n2,1,0,0.5\n3,2,1,1.5\n");
  auto engine = [] {
    auto e = std::make_unique<Engine>(7);
    e->set_plates(false);
    test::run(*e, "[assume mu (normal 0 1)] [assume f (lambda (x) (multivariate_normal (+ mu x) (id_matrix 2)))]");
    return e;
  };
  auto load = [&](const std::string& path, const std::string& columns) {
    std::unique_ptr<Engine> e = engine();
    test::run(*e, "[observe_csv f \"" + path + "\" " + columns + "]");
    return test::fingerprint_of(*e);
  };
  std::unique_ptr<Engine> by_row = engine();
  by_row->observe_apply("f", {vec2(0, 0.5)}, vec2(2, 1));
  by_row->observe_apply("f", {vec2(1, 1.5)}, vec2(3, 2));
  const std::string expected = test::fingerprint_of(*by_row);
  CHECK(load(mixed, "(x1 x2)") == expected);
  CHECK(load(sorted, "(0 \"x2\")") == expected);
  CHECK(load(sorted, "(1 0)") != expected);  // the value in the other order
}

}  // namespace
}  // namespace vnt::plate_transaction_tests
