// The public API (vnt/vnt.hpp): directives, bulk observations, errors, parameters and reproducibility.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vnt/vnt.hpp"

namespace {

vnt::Options seeded(uint64_t seed) {
  vnt::Options o;
  o.seed = seed;
  return o;
}

double mean(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

/// Runs f, which must throw vnt::RuntimeError, and returns the error.
template <class F>
vnt::RuntimeError error_of(F&& f) {
  try {
    f();
  } catch (const vnt::RuntimeError& e) {
    return e;
  }
  FAIL("expected a vnt::RuntimeError");
  return vnt::RuntimeError("", "", "", "");
}

TEST_CASE("execute returns the values of predict and sample, in order") {
  vnt::Runtime rt;
  std::vector<vnt::Datum> out =
      rt.execute("[assume a 2] [predict (+ a 1)] [observe (normal a 1) 0.5] [sample (* a 3)]");
  REQUIRE(out.size() == 2);
  CHECK(out[0].as_double() == 3.0);
  CHECK(out[1].as_double() == 6.0);
  // Each call returns only its own outputs.
  CHECK(rt.execute("[assume b 1]").empty());
  out = rt.execute("[predict (vector a b)] [predict (< a b)] [predict 'sym]");
  REQUIRE(out.size() == 3);
  REQUIRE(std::holds_alternative<Eigen::VectorXd>(out[0].value));
  CHECK(std::get<Eigen::VectorXd>(out[0].value) == Eigen::Vector2d(2, 1));
  CHECK(std::get<bool>(out[1].value) == false);
  CHECK(out[1].as_double() == 0.0);
  CHECK_THROWS_AS(out[0].as_double(), std::invalid_argument);
  CHECK(std::get<std::string>(out[2].value) == "sym");
}

// The values of the directives that ran before a failing one were lost, though the directives stayed in effect.
TEST_CASE("the error of execute holds the values of the predicts and samples that ran before it") {
  vnt::Runtime rt;
  vnt::RuntimeError e =
      error_of([&] { rt.execute("[predict 1] [assume x 2] [sample (+ x 1)] [predict (normal 0 -1)]"); });
  CHECK(e.kind() == "domain error");
  REQUIRE(e.outputs().size() == 2);
  CHECK(e.outputs()[0].as_double() == 1);
  CHECK(e.outputs()[1].as_double() == 3);
  CHECK(rt.report("x").as_double() == 2);  // in effect
  vnt::RuntimeError copy = e;  // copies share them
  CHECK(&copy.outputs() == &e.outputs());

  CHECK(error_of([&] { rt.execute("[predict (normal 0 -1)]"); }).outputs().empty());
  CHECK(error_of([&] { rt.predict("(normal 0 -1)"); }).outputs().empty());
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "vnt_api_outputs_test.vnt";
  std::ofstream(file) << "[predict 4]\n[predict nosuch]\n";
  e = error_of([&] { rt.execute_file(file.string()); });
  std::filesystem::remove(file);
  CHECK(e.kind() == "name error");
  REQUIRE(e.outputs().size() == 1);
  CHECK(e.outputs()[0].as_double() == 4);
  CHECK(rt.execute("[predict 5]").size() == 1);  // a later execute returns only its own
}

TEST_CASE("Datum::to_string prints as pprun does: strings quoted, symbols and lists as written") {
  vnt::Runtime rt;
  std::vector<vnt::Datum> out =
      rt.execute("[predict 'sym] [predict \"str\"] [predict (list 'a 1 \"s\")] [predict 2.5] [predict (vector 1 2)]");
  REQUIRE(out.size() == 5);
  CHECK(out[0].to_string() == "sym");
  CHECK(std::get<std::string>(out[1].value) == "str");
  CHECK(out[1].to_string() == "\"str\"");
  CHECK(out[2].to_string() == "(a 1 \"s\")");
  CHECK(out[3].to_string() == "2.5");
  CHECK(out[4].to_string() == "[1 2]");
  CHECK(!out[1].printed);
  CHECK(out[2].printed);
}

TEST_CASE("assume, observe, predict, sample, infer, report and forget") {
  vnt::Runtime rt(seeded(3));
  double mu0 = rt.assume("mu", "(normal 0 1)").as_double();
  CHECK(std::isfinite(mu0));
  CHECK(rt.report("mu").as_double() == mu0);
  rt.observe("(normal mu 0.5)", 2.0);
  CHECK(rt.predict("(* mu 2)", "twice").as_double() == 2 * mu0);
  CHECK(rt.sample("(+ 1 2)").as_double() == 3.0);

  rt.infer("(repeat 50 (do (mh default one 'drift 0.5 2) (collect mu (* mu 2))))");
  CHECK(rt.draw_columns() == std::vector<std::string>{"mu", "(* mu 2)"});
  REQUIRE(rt.draw_rows() == 50);
  std::vector<double> mu = rt.draws("mu"), twice = rt.draws("(* mu 2)");
  REQUIRE(mu.size() == 50);
  for (size_t i = 0; i < mu.size(); ++i) CHECK(twice[i] == 2 * mu[i]);
  // A misspelt column is an error naming the columns there are (it was an empty column).
  vnt::RuntimeError e = error_of([&] { rt.draws("nosuch"); });
  CHECK(e.kind() == "name error");
  CHECK(e.message() == "draws: no column 'nosuch' (there are 'mu', '(* mu 2)')");
  // The labelled predict follows the trace.
  double mu1 = rt.report("mu").as_double();
  CHECK(rt.report("twice").as_double() == 2 * mu1);
  CHECK(mu1 == mu.back());

  rt.forget("twice");
  CHECK(error_of([&] { rt.report("twice"); }).kind() == "name error");
  CHECK(error_of([&] { rt.forget("twice"); }).kind() == "name error");
  CHECK(rt.report("mu").as_double() == mu1);
}

TEST_CASE("draws_present tells a row without a value from a NaN draw, which draws() both give as NaN") {
  vnt::Runtime rt;
  rt.assume("k", "2");
  rt.infer("(collect (zeros k) (/ 0 0))");
  rt.forget("k");
  rt.assume("k", "1");
  rt.infer("(collect (zeros k) (/ 0 0))");  // a shorter vector: the second row has no "(zeros k)[1]"
  REQUIRE(rt.draw_rows() == 2);
  const std::vector<double> second = rt.draws("(zeros k)[1]"), nans = rt.draws("(/ 0 0)");
  REQUIRE(second.size() == 2);
  CHECK(second[0] == 0);
  CHECK(std::isnan(second[1]));
  CHECK((std::isnan(nans[0]) && std::isnan(nans[1])));
  CHECK(rt.draws_present("(zeros k)[1]") == std::vector<bool>{true, false});
  CHECK(rt.draws_present("(zeros k)[0]") == std::vector<bool>{true, true});
  CHECK(rt.draws_present("(/ 0 0)") == std::vector<bool>{true, true});
  CHECK(error_of([&] { rt.draws_present("nosuch"); }).message() ==
        "draws_present: no column 'nosuch' (there are '(zeros k)[0]', '(zeros k)[1]', '(/ 0 0)')");
  rt.infer("(collect 1 2 3 4 5 6)");
  CHECK(error_of([&] { rt.draws("nosuch"); }).message() ==
        "draws: no column 'nosuch' (there are '(zeros k)[0]', '(zeros k)[1]', '(/ 0 0)', '1', '2' and 4 more)");
  rt.clear_draws();
  CHECK(error_of([&] { rt.draws("1"); }).message() == "draws: no column '1': nothing has been collected");
}

TEST_CASE("observe_apply loads 1000 rows in a loop and they shape the posterior") {
  vnt::Runtime rt(seeded(5));
  rt.assume("slope", "(normal 0 10)");
  rt.assume("y_x", "(lambda (x) (normal (* slope (lookup x 0)) 1))");
  // y = 3 x + a deterministic, zero-mean wiggle: the posterior of slope is close to 3 with sd about 0.03.
  for (int i = 0; i < 1000; ++i) {
    Eigen::VectorXd x(1);
    x << 0.5 + (i % 10) / 10.0;
    double y = 3 * x[0] + 0.5 * std::sin(i * 1.7);
    rt.observe_apply("y_x", {vnt::Datum(x)}, y);
  }
  rt.infer("(mh default one 'drift 0.05 400)");
  rt.infer("(repeat 200 (do (mh default one 'drift 0.05 1) (collect slope)))");
  CHECK(mean(rt.draws("slope")) == doctest::Approx(3.0).epsilon(0.03));
  // Observations by name: a bad row throws and changes nothing.
  CHECK(error_of([&] { rt.observe_apply("nosuch", {1.0}, 1.0); }).kind() == "name error");
  CHECK(error_of([&] { rt.observe_apply("y_x", {1.0, 2.0}, 1.0); }).kind() == "arity error");
  CHECK(error_of([&] { rt.observe_apply("y_x", {1.0}, 1.0); }).kind() == "type error");
  vnt::Datum two(Eigen::VectorXd(Eigen::VectorXd::Ones(2)));
  CHECK(error_of([&] { rt.observe_apply("y_x", {two}, two); }).kind() == "type error");  // a vector, not a number
  CHECK(error_of([&] { rt.observe_apply("slope", {}, 1.0); }).kind() != "internal error");
  // The failed rows left nothing behind: inference goes on over the 1000 good ones.
  rt.infer("(repeat 100 (do (mh default one 'drift 0.05 1) (collect slope)))");
  CHECK(rt.draw_rows() == 300);
  CHECK(rt.report("slope").as_double() == doctest::Approx(3.0).epsilon(0.05));
}

TEST_CASE("errors throw vnt::RuntimeError with kind, location and message, the runtime goes on") {
  vnt::Runtime rt;
  rt.execute("[assume a 1]");
  vnt::RuntimeError e = error_of([&] { rt.execute("[assume x (normal 0 -1)]", "m.vnt"); });
  CHECK(e.kind() == "domain error");
  CHECK(e.location() == "m.vnt:1:11");
  CHECK(!e.message().empty());
  CHECK(std::string(e.what()).find("m.vnt:1:11") != std::string::npos);
  CHECK(std::string(e.what()).find(e.message()) != std::string::npos);
  // An empty source name is taken as the default one, not printed as nothing (":1:11").
  CHECK(error_of([&] { rt.execute("[assume x (normal 0 -1)]", ""); }).location() == "<api>:1:11");
  // Nothing of the failed directive stays; the runtime is usable.
  CHECK(error_of([&] { rt.report("x"); }).kind() == "name error");
  CHECK(rt.execute("[predict (+ a 1)]").at(0).as_double() == 2.0);

  CHECK(error_of([&] { rt.execute("[assume y (normal 0 1]", "s.vnt"); }).kind() == "syntax error");
  CHECK(error_of([&] { rt.assume("z", "(+ 1 'a)"); }).kind() == "type error");
  CHECK(error_of([&] { rt.sample("(nosuch 1)"); }).kind() == "name error");
  CHECK(error_of([&] { rt.observe("(uniform_continuous 0 1)", 5.0); }).kind() == "zero probability");
  CHECK(error_of([&] { rt.infer("(bogus 1)"); }).kind() == "inference error");
  CHECK(error_of([&] { rt.execute_file("/nonexistent/model.vnt"); }).kind() == "i/o error");
  // A program stops at its first failing directive; the earlier ones stay.
  CHECK(error_of([&] { rt.execute("[assume b 2] [assume c (normal 0 -1)] [assume d 4]"); }).kind() == "domain error");
  CHECK(rt.report("b").as_double() == 2.0);
  CHECK(error_of([&] { rt.report("d"); }).kind() == "name error");
  CHECK(rt.sample("(+ a b)").as_double() == 3.0);
}

TEST_CASE("a name with a control character is escaped in message() and what(), as in the source line") {
  // Names reach messages from C++ strings too (observe_apply, forget, report); a NUL or an ESC in them came out raw.
  vnt::Runtime rt;
  vnt::RuntimeError e = error_of([&] { rt.observe_apply(std::string("nor\0mal", 7), {0.0, 1.0}, 1.0); });
  CHECK(e.message() == "unbound symbol 'nor\\x00mal'");
  CHECK(std::string(e.what()).find("unbound symbol 'nor\\x00mal'") != std::string::npos);
  CHECK(error_of([&] { rt.forget("a\x1b" "c"); }).message() == "forget: no directive labelled 'a\\x1bc'");
  CHECK(error_of([&] { rt.report("\xff"); }).message() == "no directive labelled '\\xff'");
  CHECK(rt.sample("(quote a\x1b" "c)").to_string() == "a\\x1bc");
}

TEST_CASE("Options.params fill {name}, a missing one is a parameter error") {
  vnt::Options options;
  options.params = {{"n", "5"}, {"flag", "true"}, {"steps", "7"}};
  vnt::Runtime rt(options);
  std::vector<vnt::Datum> out = rt.execute("[predict (+ {n} 1)] [predict {flag}]");
  REQUIRE(out.size() == 2);
  CHECK(out[0].as_double() == 6.0);
  CHECK(std::get<bool>(out[1].value) == true);
  CHECK(rt.assume("k", "(* {n} 2)").as_double() == 10.0);
  rt.assume("u", "(normal 0 1)");
  rt.infer("(repeat {steps} (do (mh default one 1) (collect u)))");
  CHECK(rt.draw_rows() == 7);

  vnt::RuntimeError e = error_of([&] { rt.execute("[predict (+ {missing} 1)]", "p.vnt"); });
  CHECK(e.kind() == "parameter error");
  CHECK(e.location() == "p.vnt:1:13");
  CHECK(e.message().find("{missing}") != std::string::npos);
  CHECK(error_of([&] { rt.infer("(repeat {nope} (collect u))"); }).kind() == "parameter error");
  CHECK(rt.draw_rows() == 7);
}

// Params were strings only: an application converting a number with std::to_string lost it (1e-7 became 0).
TEST_CASE("Options.params take numbers and booleans as such, every digit kept, text is read as pprun reads it") {
  vnt::Options options;
  options.params = {{"eps", 1e-7}, {"tenth", 0.1}, {"huge", 1e300}, {"tiny", 5e-324}, {"neg", -2.5},
                    {"n", 5},      {"size", size_t{3}}, {"off", false}, {"text", "0.25"}, {"word", "abc"}};
  vnt::Runtime rt(options);
  std::vector<vnt::Datum> out =
      rt.execute("[predict {eps}] [predict {tenth}] [predict {huge}] [predict {tiny}] [predict {neg}] "
                 "[predict {n}] [predict {size}] [predict {off}] [predict {text}] [predict {word}]");
  REQUIRE(out.size() == 10);
  CHECK(out[0].as_double() == 1e-7);
  CHECK(out[1].as_double() == 0.1);
  CHECK(out[2].as_double() == 1e300);
  CHECK(out[3].as_double() == 5e-324);
  CHECK(out[4].as_double() == -2.5);
  CHECK(out[5].as_double() == 5);
  CHECK(out[6].as_double() == 3);
  CHECK(std::get<bool>(out[7].value) == false);
  CHECK(out[8].as_double() == 0.25);
  CHECK(out[9].to_string() == "\"abc\"");  // text that is not a number is a string, as on pprun's command line
  for (double bad : {std::nan(""), HUGE_VAL, -HUGE_VAL}) {
    vnt::RuntimeError e = error_of([&] { vnt::Param p(bad); });
    CHECK(e.kind() == "parameter error");
    CHECK(e.message().find("a parameter's number must be finite, got ") == 0);
  }
}

TEST_CASE("the same seed gives the same draws") {
  auto run = [](uint64_t seed) {
    vnt::Runtime rt(seeded(seed));
    rt.execute("[assume m (normal 0 1)] [assume s (gamma 2 2)] [observe (normal m s) 0.7]");
    rt.infer("(repeat 100 (do (mh default one 1) (collect m s)))");
    return std::vector<std::vector<double>>{rt.draws("m"), rt.draws("s")};
  };
  auto a = run(42), b = run(42), c = run(43);
  CHECK(a == b);
  CHECK(a != c);
  vnt::Runtime moved = [] {
    vnt::Runtime rt(seeded(1));
    rt.assume("q", "3");
    return rt;
  }();
  CHECK(moved.report("q").as_double() == 3.0);
}

}  // namespace

TEST_CASE("observe_apply with an empty procedure name is a name error, whatever directive came before") {
  vnt::Runtime rt;
  rt.assume("mu", "(normal 0 1)");  // an ordinary directive record: its bulk procedure is empty too
  CHECK(error_of([&] { rt.observe_apply("", {}, 1.0); }).kind() == "name error");
  rt.observe("(normal mu 1)", 0.5);
  CHECK(error_of([&] { rt.observe_apply("", {1.0}, 1.0); }).kind() == "name error");
  CHECK(rt.predict("(+ mu 0)").is_number());
}

TEST_CASE("assume names and predict labels must be symbols, as in a program, the runtime is unchanged") {
  vnt::Runtime rt;
  for (const char* bad : {"", "a b", "1", "(", "'x", "{p}", "a:", "true", "x)"}) {
    CAPTURE(bad);
    CHECK(error_of([&] { rt.assume(bad, "1"); }).kind() == "syntax error");
    if (*bad != '\0') {  // "": no label
      CHECK(error_of([&] { rt.predict("1", bad); }).kind() == "syntax error");
      CHECK(error_of([&] { rt.observe("(normal 0 1)", 0.5, bad); }).kind() == "syntax error");
    }
  }
  CHECK(rt.assume("ok_name", "2").as_double() == 2.0);
  CHECK(rt.predict("(+ ok_name 1)", "lbl").as_double() == 3.0);
  CHECK(rt.report("lbl").as_double() == 3.0);
}

TEST_CASE("Options::max_depth below 1 is refused when the runtime is made (every evaluation would fail)") {
  for (int depth : {0, -5}) {
    vnt::Options o;
    o.max_depth = depth;
    CHECK(error_of([&] { vnt::Runtime rt(o); }).kind() == "domain error");
  }
  vnt::Options one;
  one.max_depth = 1;
  vnt::Runtime rt(one);
  CHECK(rt.predict("3").as_double() == 3.0);
  // Too deep a recursion names the option to raise, as pprun names --max-depth.
  vnt::Options shallow;
  shallow.max_depth = 50;
  vnt::Runtime deep(shallow);
  deep.assume("count", "(lambda (n) (if (<= n 0) 0 (+ 1 (count (- n 1)))))");
  CHECK(deep.predict("(count 10)").as_double() == 10.0);
  const vnt::RuntimeError e = error_of([&] { deep.predict("(count 100)"); });
  CHECK(e.message() == "maximum evaluation depth (50) exceeded: runaway recursion?");
  const std::string what = e.what();
  const std::string note =
      "  note: if the recursion is meant to be this deep, raise vnt::Options::max_depth (the calling thread's stack "
      "must hold it: up to 2 KiB per level, 5 KiB under sanitizers)\n";
  CHECK(what.ends_with(note));
}

// They said "no directive labelled 's'", as if the label were misspelt.
TEST_CASE("report and forget of a labelled sample say that a sample keeps nothing") {
  vnt::Runtime rt;
  CHECK(rt.execute("s: [sample (+ 1 2)]").at(0).as_double() == 3);
  CHECK(error_of([&] { rt.report("s"); }).message() ==
        "'s' labels a [sample], which keeps no value (it printed one when it ran)");
  CHECK(error_of([&] { rt.forget("s"); }).message() ==
        "forget: 's' labels a [sample], which keeps nothing in the trace to forget");
  rt.execute("s: [predict 4]");  // the label is free for a directive that is kept
  CHECK(rt.report("s").as_double() == 4);
}

TEST_CASE("forget and report of the empty label are name errors: unlabelled directives are not labelled \"\"") {
  vnt::Runtime rt(seeded(2));
  rt.execute("a: [assume mu (normal 0 1)]");
  rt.observe("(normal mu 0.1)", 5.0);  // the first unlabelled directive: forget("") used to remove it
  CHECK(error_of([&] { rt.forget(""); }).kind() == "name error");
  CHECK(error_of([&] { rt.report(""); }).kind() == "name error");
  rt.infer("(mh default one 'drift 0.5 300)");
  CHECK(rt.report("mu").as_double() > 4.0);  // the observation still holds mu near 5
}

TEST_CASE("a Datum made from text holds a string (a string literal used to convert to the boolean true)") {
  vnt::Datum literal("false");
  REQUIRE(std::holds_alternative<std::string>(literal.value));
  CHECK(literal.to_string() == "\"false\"");
  CHECK(vnt::Datum(std::string("s")).to_string() == "\"s\"");
  vnt::Runtime rt;
  CHECK(error_of([&] { rt.observe("(flip 0.5)", "false"); }).kind() == "zero probability");
  rt.assume("f", "(lambda (s) (normal (size s) 1))");
  rt.observe_apply("f", {"abc"}, 2.5);
  rt.observe_apply("f", {std::string("de")}, 2.0);
}

// A default-constructed Datum holds nothing: observing it is a type error that says so (it was "observe: nil has
// probability zero under ..."), and nothing is observed.
TEST_CASE("observing a default-constructed Datum is a type error saying the value is missing") {
  vnt::Runtime rt;
  rt.assume("mu", "(normal 0 1)");
  rt.assume("f", "(lambda (x) (normal mu 1))");
  vnt::RuntimeError e = error_of([&] { rt.observe("(normal mu 1)", vnt::Datum()); });
  CHECK(e.kind() == "type error");
  CHECK(e.message() == "observe: the observed value is missing (a default-constructed vnt::Datum)");
  e = error_of([&] { rt.observe_apply("f", {1.0}, vnt::Datum()); });
  CHECK(e.kind() == "type error");
  CHECK(e.message() == "observe_apply: the observed value is missing (a default-constructed vnt::Datum)");
  rt.observe("(normal mu 1)", 0.5);
  rt.observe_apply("f", {1.0}, 0.5);
}

// API observations had no label, so they could not be forgotten.
TEST_CASE("a labelled observe can be forgotten, and the posterior forgets it, a label taken is refused") {
  vnt::Runtime rt(seeded(6));
  rt.assume("mu", "(normal 0 1)");
  rt.observe("(normal mu 0.1)", 5.0, "far");
  CHECK(error_of([&] { rt.observe("(normal mu 1)", 0.0, "far"); }).kind() == "name error");
  rt.infer("(mh default one 'drift 0.5 300)");
  CHECK(rt.report("mu").as_double() > 4.0);  // held near 5 by the one observation
  rt.forget("far");
  CHECK(error_of([&] { rt.forget("far"); }).kind() == "name error");
  rt.infer("(repeat 2000 (do (mh default one 'drift 1 1) (collect mu)))");
  // The prior N(0, 1) again: 2000 draws of a chain whose autocorrelation time is below 10 give a mean within 0.35.
  CHECK(std::abs(mean(rt.draws("mu"))) < 0.35);
  rt.observe("(normal mu 1)", 0.0, "far");  // the label is free again
}

// Two expressions written alike in one collect are two columns (they merged into one, the last value winning).
TEST_CASE("each expression of a collect has a column of its own, even when two are written alike") {
  vnt::Runtime rt(seeded(4));
  rt.infer("(repeat 20 (collect (normal 0 1) (normal 0 1) (normal 0 1)))");
  CHECK(rt.draw_columns() == std::vector<std::string>{"(normal 0 1)", "(normal 0 1)#2", "(normal 0 1)#3"});
  std::vector<double> a = rt.draws("(normal 0 1)"), b = rt.draws("(normal 0 1)#2");
  REQUIRE(a.size() == 20);
  REQUIRE(b.size() == 20);
  CHECK(a != b);

  // A suffix never takes a name that is written in the collect (x#2 is a symbol); vectors expand after it.
  vnt::Runtime named(seeded(4));
  named.assume("x", "(normal 0 1)");
  named.assume("x#2", "5");
  named.assume("v", "(vector 1 2)");
  named.infer("(collect x x#2 x v v)");
  CHECK(named.draw_columns() == std::vector<std::string>{"x", "x#2", "x#3", "v[0]", "v[1]", "v#2[0]", "v#2[1]"});
  CHECK(named.draws("x#2") == std::vector<double>{5});
  CHECK(named.draws("x#3") == named.draws("x"));
  CHECK(named.draws("v#2[1]") == std::vector<double>{2});
}

// A session that runs infer in a loop kept every kernel report (and its program's text) and every row for good.
TEST_CASE("clear_draws and clear_kernel_reports drop what the session has reported so far") {
  vnt::Runtime rt(seeded(3));
  rt.assume("m", "(normal 0 1)");
  rt.infer("(repeat 4 (do (mh default one 1) (collect m)))");
  rt.infer("(mh default one 2)");
  REQUIRE(rt.draw_rows() == 4);
  REQUIRE(rt.kernel_reports().size() == 2);
  rt.clear_draws();
  rt.clear_kernel_reports();
  CHECK(rt.draw_rows() == 0);
  CHECK(rt.draw_columns().empty());
  CHECK(rt.kernel_reports().empty());
  // Later calls report afresh, and the trace is untouched.
  const double m = rt.report("m").as_double();
  rt.infer("(repeat 3 (collect m))");
  CHECK(rt.draws("m") == std::vector<double>{m, m, m});
  REQUIRE(rt.kernel_reports().empty());  // collect alone runs no kernel
  rt.infer("(mh default one 1)");
  REQUIRE(rt.kernel_reports().size() == 1);
  CHECK(rt.kernel_reports()[0].transitions == 1);
}

TEST_CASE("take_kernel_reports returns the reports since the last call and drops them") {
  vnt::Runtime rt(seeded(3));
  rt.assume("m", "(normal 0 1)");
  CHECK(rt.take_kernel_reports().empty());
  rt.infer("(mh default one 2)");
  rt.infer("(cycle ((mh default one 1) (mh default all 1)) 3)");
  std::vector<vnt::KernelReport> taken = rt.take_kernel_reports();
  REQUIRE(taken.size() == 3);
  CHECK(taken[0].transitions == 2);
  CHECK((taken[1].block == "one" && taken[1].transitions == 3));
  CHECK((taken[2].block == "all" && taken[2].transitions == 3));
  CHECK(rt.kernel_reports().empty());
  CHECK(rt.take_kernel_reports().empty());
  rt.infer("(mh default one 4)");
  taken = rt.take_kernel_reports();
  REQUIRE(taken.size() == 1);
  CHECK(taken[0].transitions == 4);
  CHECK(taken[0].location == "<api:4>:1:1");
}

// Columns were keyed by the exact source text while the summary showed it with its spacing collapsed: a burn-in
// and a sampling [infer] whose collects were spaced differently filled two columns that looked alike.
TEST_CASE("collects of one expression written with other spacing, over lines or with comments fill one column") {
  vnt::Runtime rt(seeded(4));
  rt.assume("mu", "(normal 0 1)");
  rt.infer("(repeat 2 (collect (+ mu 1)))");
  rt.infer("(repeat 3 (collect ( +  mu\n  1 ) ; one more\n))");
  rt.infer("(repeat 1 (collect (+ mu 1.0)))");  // 1.0 is not written 1: a column of its own
  CHECK(rt.draw_columns() == std::vector<std::string>{"(+ mu 1)", "(+ mu 1.0)"});
  const std::vector<double> one = rt.draws("(+ mu 1)");
  REQUIRE(one.size() == 6);  // the last row has no value there
  CHECK(std::count_if(one.begin(), one.end(), [](double x) { return std::isfinite(x); }) == 5);
}

/// Runs `call` on another thread, interrupts it from this one after 0.1 s, and returns "kind: message" of the
/// RuntimeError it threw ("" if it returned).
template <class F>
std::string interrupted(vnt::Runtime& rt, F&& call) {
  std::string error;
  std::thread runner([&] {
    try {
      call();
    } catch (const vnt::RuntimeError& e) {
      error = e.kind() + ": " + e.message();
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  rt.interrupt();
  runner.join();
  return error;
}

TEST_CASE("interrupt() from another thread stops an infer (moves kept) or a directive (undone), the runtime goes on") {
  vnt::Runtime rt(seeded(5));
  rt.execute("[assume m (normal 0 1)] [observe (normal m 1) 0.5]");
  rt.interrupt();  // a request made before a call is forgotten when the call starts
  rt.infer("(mh default one 5)");
  // hours, unless interrupted
  CHECK(interrupted(rt, [&] { rt.infer("(repeat 100000000 (do (mh default one 1) (collect m)))"); }) ==
        "inference error: interrupted (Runtime::interrupt): the transitions made and the draws collected before it "
        "are kept");
  const std::vector<vnt::KernelReport> reports = rt.kernel_reports();
  REQUIRE(reports.size() == 2);
  CHECK(reports[1].transitions > 0);  // the moves made before the interrupt are kept, as by any failing infer
  // and so are the rows it collected (one per transition here), unlike those of an infer that fails
  const size_t rows = rt.draw_rows();
  CHECK(rows > 0);
  CHECK(reports[1].transitions - rows <= 1);  // stopped between the mh and its collect, or after the collect
  rt.infer("(repeat 3 (do (mh default one 1) (collect m)))");
  CHECK(rt.draw_rows() == rows + 3);

  // Any other directive stops at its next procedure call and is undone.
  rt.assume("fib", "(lambda (n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))");
  const double m = rt.report("m").as_double();
  CHECK(interrupted(rt, [&] { rt.predict("(+ m (fib 60))", "slow"); }) ==  // about 1e12 calls
        "inference error: interrupted (Runtime::interrupt): the directive is undone");
  CHECK(error_of([&] { rt.report("slow"); }).kind() == "name error");
  CHECK(rt.report("m").as_double() == m);
  CHECK(rt.predict("(fib 10)").as_double() == 55);

  vnt::Runtime moved(std::move(rt));
  rt.interrupt();  // does nothing on a moved-from runtime (it may be called from a signal handler)
  moved.interrupt();
}

#ifdef NDEBUG
constexpr bool kOptimized = true;
#else
constexpr bool kOptimized = false;
#endif

/// What a twin runtime with the same seed and directives goes on to draw: equal if the interrupted call on one of
/// them left its trace, random stream and order of choices as they were.
std::vector<double> draws_after(vnt::Runtime& rt) {
  std::vector<double> out{rt.sample("(normal 0 1)").as_double()};
  rt.infer("(repeat 20 (do (mh default one 1) (collect m)))");
  std::vector<double> m = rt.draws("m");
  out.insert(out.end(), m.begin(), m.end());
  return out;
}

TEST_CASE("interrupt() stops a large matrix product and a large plate load, leaving the trace as it was") {
  const std::string before = "[assume m (normal 0 1)] [assume s (gamma 1 1)] [observe (normal m s) 0.5]";
  vnt::Runtime rt(seeded(9)), twin(seeded(9));
  rt.execute(before);
  twin.execute(before);
  const double m = rt.report("m").as_double();
  if (kOptimized) {  // unoptimized (sanitizers), Eigen takes seconds for one block of a product
    // Uninterrupted, the product takes seconds: 2.7e10 multiply-adds.
    CHECK(interrupted(rt, [&] { rt.predict("(matrix_mul (id_matrix 3000) (id_matrix 3000))", "big"); }) ==
          "inference error: interrupted (Runtime::interrupt): the directive is undone");
    CHECK(error_of([&] { rt.report("big"); }).kind() == "name error");
    CHECK(rt.report("m").as_double() == m);
    // A product in blocks has the entries of one.
    CHECK(rt.sample("(mat_lookup (matrix_mul (id_matrix 600) (diag_matrix (* 2 (ones 600)))) 599 599)")
              .as_double() == 2);
  }

  // Each row costs a small matrix product (not in blocks, so not polled): the rows take seconds.
  const std::filesystem::path csv =
      std::filesystem::temp_directory_path() / ("vnt_interrupt_plate_" + std::to_string(::getpid()) + ".csv");
  {
    std::ofstream out(csv);
    out << "x,y\n";
    for (int i = 0; i < 60000; ++i) out << i % 7 << ",0.5\n";
  }
  const std::string model = "[assume w (id_matrix " + std::to_string(kOptimized ? 64 : 4) + ")]"
                            "[assume f (lambda (x) (normal (+ (lookup x 0) (mat_lookup (matrix_mul w w) 0 0)) s))]";
  rt.execute(model);
  twin.execute(model);
  const std::string load = "[observe_csv f \"" + csv.string() + "\" y]";
  const std::string error = interrupted(rt, [&] { rt.execute(load); });
  std::filesystem::remove(csv);
  CHECK(error.starts_with("inference error: "));
  CHECK(error.ends_with("interrupted (Runtime::interrupt): the directive is undone"));
  CHECK(rt.report("m").as_double() == m);
  CHECK(draws_after(rt) == draws_after(twin));
}

TEST_CASE("observe_csv of a list of value columns: a failing row leaves the session as it was, a label forgets all") {
  const std::filesystem::path csv =
      std::filesystem::temp_directory_path() / ("vnt_column_list_" + std::to_string(::getpid()) + ".csv");
  std::ofstream(csv) << "a,x2,b,x1\n0,1,0,2\n1,2,1,3\n2,inf,2,4\n";
  const std::string model = "[assume m (normal 0 1)] [assume s (gamma 1 1)]"
                            "[assume f (lambda (i x) (multivariate_normal (+ m x) (* s (id_matrix 2))))]";
  vnt::Runtime rt(seeded(11)), twin(seeded(11));
  rt.execute(model);
  twin.execute(model);
  const std::string load = "d: [observe_csv f \"" + csv.string() + "\" (x1 x2) 'with_index]";
  vnt::RuntimeError e = error_of([&] { rt.execute(load, "c.vnt"); });
  CHECK(e.kind() == "zero probability");
  CHECK(e.location() == "c.vnt:1:1");
  CHECK(e.message() ==
        "observe_csv: row at " + csv.string() + ":4: observe: [4 inf] has probability zero under (f ...)");
  CHECK(draws_after(rt) == draws_after(twin));
  // Without the bad row the rows load; the label removes all of them, and then nothing uses f.
  std::ofstream(csv) << "a,x2,b,x1\n0,1,0,2\n1,2,1,3\n";
  rt.execute(load);
  CHECK(error_of([&] { rt.forget("f"); }).kind() == "inference error");
  rt.forget("d");
  rt.forget("f");
  std::filesystem::remove(csv);
}

TEST_CASE("a failed call does not make a kernel on a scope only it names legal") {
  vnt::Runtime rt;
  rt.assume("x", "(normal 0 1)");
  CHECK_THROWS_AS(rt.predict("(scope_include 'q 0 (normal 0 -1))"), vnt::RuntimeError);
  CHECK_THROWS_AS(rt.sample("(scope_include 'q 0 (nosuch))"), vnt::RuntimeError);
  CHECK_THROWS_AS(rt.assume("y", "(scope_include 'q 0 (normal 0 -1))"), vnt::RuntimeError);
  CHECK_THROWS_AS(rt.observe("(scope_include 'q 0 (normal 0 -1))", 1.0), vnt::RuntimeError);
  CHECK_THROWS_AS(rt.infer("(do (collect (scope_include 'q 0 1)) (mh nosuch one 1))"), vnt::RuntimeError);
  CHECK_THROWS_AS(rt.execute("[predict (scope_include 'q 0 (normal 0 -1))]"), vnt::RuntimeError);
  auto q_refused = [&] {
    try {
      rt.infer("(mh q one 1)");
      return std::string("no error");
    } catch (const vnt::RuntimeError& e) {
      return std::string(e.message());
    }
  };
  const std::string refused = "mh: scope 'q' has no random choices to propose to";
  CHECK(q_refused() == refused);
  // Nor does a sample that ran: nothing names q once its expression is gone. A live directive does, as an assumed
  // procedure that will make the choice, until it is forgotten.
  rt.sample("(if false (scope_include 'q 0 (normal 0 1)) 1)");
  CHECK(q_refused() == refused);
  rt.assume("f", "(lambda () (scope_include 'q 0 (normal 0 1)))");
  CHECK(q_refused() == "no error");
  rt.forget("f");
  CHECK(q_refused() == refused);
}

TEST_CASE("a failed call, or a sample, takes no <api:N>: later calls are named as if it had not been made") {
  auto locations = [](bool with_failures) {
    vnt::Runtime rt(seeded(3));
    rt.assume("mu", "(normal 0 1)");
    if (with_failures) {
      CHECK_THROWS_AS(rt.predict("(normal mu -1)"), vnt::RuntimeError);
      CHECK_THROWS_AS(rt.infer("(mh default one -1)"), vnt::RuntimeError);
      CHECK_THROWS_AS(rt.observe("(normal mu 1)", "text"), vnt::RuntimeError);
      rt.sample("(normal mu 1)");
    }
    rt.infer("(mh default one 2)");
    std::vector<std::string> out{rt.kernel_reports().back().location};
    out.push_back(error_of([&] { rt.predict("(nosuch)"); }).location());
    return out;
  };
  CHECK(locations(false) == std::vector<std::string>{"<api:2>:1:1", "<api:3>:1:2"});
  CHECK(locations(true) == locations(false));
}

TEST_CASE("an interrupt made while execute_file waits for its file stops it, and nothing runs") {
  const std::string fifo = (std::filesystem::temp_directory_path() / ("vnt_api_fifo_" + std::to_string(getpid())))
                               .string();
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  vnt::Runtime rt;
  std::thread writer([&] {
    std::ofstream out(fifo);  // opens once execute_file has opened the file to read it
    rt.interrupt();
    out << "[assume a (+ 1 2)] [predict (* a 2)]";
  });
  const std::string what = error_of([&] { rt.execute_file(fifo); }).message();
  writer.join();
  std::filesystem::remove(fifo);
  CHECK(what == "interrupted (Runtime::interrupt): nothing ran (the file was still being read)");
  CHECK(error_of([&] { rt.report("a"); }).kind() == "name error");
}

TEST_CASE("an interrupt made while execute parses a large input stops the parse, and nothing of it runs") {
  // Comment lines after a directive: seconds of lexing, and no tokens kept (comments are skipped). The last
  // directive is left open, so a lexer that does not stop for the interrupt ends in a syntax error instead. Lexing
  // is several times slower under the sanitizers, and making the text there is slow too.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
  constexpr int kLines = 400000;
#else
  constexpr int kLines = 2000000;
#endif
  std::string text = "[assume a 1]\n";
  for (int i = 0; i < kLines; ++i) text += "; a comment line\n";
  text += "[assume b 2\n";
  vnt::Runtime rt;
  CHECK(interrupted(rt, [&] { rt.execute(text); }) ==
        "inference error: interrupted (Runtime::interrupt): nothing ran (the input was still being read)");
  CHECK(error_of([&] { rt.report("a"); }).kind() == "name error");
  CHECK(rt.execute("[assume c 3] [predict c]").at(0).as_double() == 3);  // the runtime goes on
}

TEST_CASE("an interrupt made while execute_file reads a large file stops the read, and nothing runs") {
  const std::string fifo =
      (std::filesystem::temp_directory_path() / ("vnt_api_fifo_large_" + std::to_string(getpid()))).string();
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  // The read stops before the writer is done, whose next write then fails instead of killing the test.
  struct sigaction ignore = {}, old = {};
  ignore.sa_handler = SIG_IGN;
  REQUIRE(sigaction(SIGPIPE, &ignore, &old) == 0);
  vnt::Runtime rt;
  std::thread writer([&] {
    std::ofstream out(fifo);
    const std::string comments((size_t{1} << 20) - 1, ';');  // 1 MiB lines; the read polls every 16 MiB
    out << "[assume a 1]\n";
    for (int mib = 0; mib < 64 && out; ++mib) {
      if (mib == 4) rt.interrupt();
      out << comments << '\n' << std::flush;
    }
  });
  const std::string what = error_of([&] { rt.execute_file(fifo); }).message();
  writer.join();
  sigaction(SIGPIPE, &old, nullptr);
  std::filesystem::remove(fifo);
  CHECK(what == "interrupted (Runtime::interrupt): nothing ran (the file was still being read)");
  CHECK(error_of([&] { rt.report("a"); }).kind() == "name error");
  CHECK(rt.predict("2").as_double() == 2);  // the runtime goes on
}

// Warnings (a subsampled_mh falling back to exact mh, once per infer) reach the API through take_warnings, shown as
// messages are (the ESC in the scope's name escaped); an embedding that never takes them keeps at most 1000.
TEST_CASE("take_warnings returns the warnings since the last call, escaped, and at most kMaxWarnings are kept") {
  vnt::Runtime rt;
  rt.execute(
      "[assume w (scope_include 'w\x1b 0 (normal 0 1))]"
      "[assume f (lambda (x) (normal (if (> w x) 1 2) 1))]"
      "[observe (f 1) 0.5] [observe (f 2) 1.5] [observe (f 3) 2.0]");
  CHECK(rt.take_warnings().empty());
  rt.infer("(subsampled_mh w\x1b all 2 0.1 'drift 0.1 3 'fallback 'mh)");
  std::vector<std::string> w = rt.take_warnings();
  REQUIRE(w.size() == 1);
  CHECK(w[0] == "<api:1>:1:1: subsampled_mh: scope 'w\\x1b' cannot be subsampled (a local section changes the "
               "structure of the trace); using exact mh");
  CHECK(rt.take_warnings().empty());
  for (size_t i = 0; i < 1002; ++i) rt.infer("(subsampled_mh w\x1b all 2 0.1 'drift 0.1 1 'fallback 'mh)");
  w = rt.take_warnings();
  REQUIRE(w.size() == 1001);
  CHECK(w[999].rfind("<api:1001>:1:1: subsampled_mh: scope 'w\\x1b' cannot be subsampled", 0) == 0);
  CHECK(w[1000] == "... and 2 more warnings");
  CHECK(rt.take_warnings().empty());
}

TEST_CASE("a moved-from Runtime throws on every method, and can still be destroyed and assigned to") {
  vnt::Runtime a(seeded(3));
  a.assume("m", "(normal 0 1)");
  vnt::Runtime b(std::move(a));
  auto moved_from = [](auto&& call, const char* method) {
    vnt::RuntimeError e = error_of(call);
    CHECK(e.message() == std::string("vnt::Runtime::") + method +
                             ": this runtime was moved from (assign a new Runtime to it first)");
    CHECK(e.location().empty());
  };
  moved_from([&] { a.execute("[predict 1]"); }, "execute");
  moved_from([&] { a.execute_file("no_such_file.vnt"); }, "execute_file");
  moved_from([&] { a.assume("x", "1"); }, "assume");
  moved_from([&] { a.observe("(normal 0 1)", 0.5); }, "observe");
  moved_from([&] { a.observe_apply("normal", {0.0, 1.0}, 0.5); }, "observe_apply");
  moved_from([&] { a.predict("1"); }, "predict");
  moved_from([&] { a.sample("1"); }, "sample");
  moved_from([&] { a.infer("(mh default one 1)"); }, "infer");
  moved_from([&] { a.forget("m"); }, "forget");
  moved_from([&] { a.report("m"); }, "report");
  moved_from([&] { a.draw_columns(); }, "draw_columns");
  moved_from([&] { a.draws("m"); }, "draws");
  moved_from([&] { a.draws_present("m"); }, "draws_present");
  moved_from([&] { a.draw_rows(); }, "draw_rows");
  moved_from([&] { a.kernel_reports(); }, "kernel_reports");
  moved_from([&] { a.take_warnings(); }, "take_warnings");
  // The runtime that took the state has it, outputs included (they used to go to the moved-from object).
  CHECK(b.report("m").is_number());
  std::vector<vnt::Datum> out = b.execute("[predict 2]");
  REQUIRE(out.size() == 1);
  CHECK(out[0].as_double() == 2.0);
  // Assigning a new Runtime makes it usable again; assigning a moved-from one empties the target.
  a = vnt::Runtime(seeded(4));
  CHECK(a.execute("[predict 3]").at(0).as_double() == 3.0);
  vnt::Runtime c(std::move(b));
  b = std::move(a);
  CHECK(b.execute("[predict 4]").at(0).as_double() == 4.0);
  CHECK(c.execute("[predict m]").size() == 1);
  a = vnt::Runtime(std::move(a));  // moving from an empty runtime is fine too
  CHECK_THROWS_AS(a.predict("1"), vnt::RuntimeError);
}
