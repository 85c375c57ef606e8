// Out of memory anywhere in a directive: it fails with an error at the directive, and leaves the trace, the random
// stream and the records exactly as they were, so the session goes on as one that never ran it; or, with memory
// short for good, where nothing can undo the step that failed, the session says it cannot go on (docs/language.md).
// Each case runs its directive once for every allocation it makes, failing that one
// (docs/testing.md#out-of-memory).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>
#include <unistd.h>

#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "parser/syntax.hpp"
#include "runtime/core/diagnostics.hpp"
#include "runtime/syntax/analyze.hpp"
#include "tests/fault/failing_new.hpp"
#include "tests/support/engine_fixture.hpp"

namespace vnt::allocation_failure_tests {
namespace {

/// A CSV file of the test's own (one per process: ctest runs the test cases at once), removed at the end.
struct CsvFile {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / fmt::format("vnt_allocation_failure_{}.csv", ::getpid());
  CsvFile() { std::ofstream(path) << "y,x\n1,0.5\n0,-1\n1,2\n"; }
  ~CsvFile() { std::filesystem::remove(path); }
};

// A partitioned w whose sections hold deterministic nodes (the products), left stale by the subsampled moves at
// the end; a mem'd procedure, made SPs (a coin, a restaurant whose tables grow and shrink and whose maker absorbs
// a move of its alpha), a scope other than default, a plate and rows kept as families; two observations whose
// choices a move of k makes again, one reading the other's (constrained at their breaks); a flip of the collapsed coin
// a customer's table picks, which a move of the customer takes to another coin.
std::string model(const std::string& csv) {
  return "[assume w (scope_include 'w 0 (normal 0 1))]"
         "[assume s (scope_include 's 0 (gamma 2 2))]"
         "[assume f (mem (lambda (i) (normal 0 s)))]"
         "[assume g (lambda (x) (normal (* w x) 1))]"
         "[observe (g 0.5) 0.1] [observe (g 1.5) 0.2] [observe (g -1) -0.2] [observe (g 3) 0.5]"
         "[assume y_x (lambda (x) (bernoulli (linear_logistic (vector w s) x)))]"
         "[assume h (lambda (x) (normal (+ (f x) w) 1))]"
         "rows: [observe_csv y_x \"" + csv + "\" y]"
         "[assume coin (make_beta_bernoulli 1 1)] [observe (coin) true]"
         "[assume ca (scope_include 'ca 0 (gamma 2 1))] [assume crp (make_crp ca)]"
         "[assume t (mem (lambda (i) (scope_include 't i (crp))))]"
         "[observe (normal (t 0) 1) 0.3] [observe (normal (t 1) 1) 1.6] [assume t2 (t 2)]"
         "[assume cs (mem (lambda (i) (make_beta_bernoulli 1 1)))] [observe ((cs (t 1))) true]"
         "[assume z (if (coin) (normal (f 1) 1) (f 2))]"
         "[assume k (scope_include 'k 0 (flip))] [assume m (if k (normal w 1) (normal 0 2))]"
         "[observe (if k (normal m 1) (normal m 3)) 0.1] [observe m 0.4]"
         "p: [predict (f 2)]"
         "[infer (subsampled_mh w all 2 0.3 'drift 0.5 4)]";
}

/// Three directives that draw from the random stream and reorder w's sections: a session that went on differently
/// from another after a failed directive differs after them.
constexpr const char* kNext =
    "[infer (mh default one 2)] [assume x2 (normal (f 2) 1)] [infer (subsampled_mh w all 2 0.3 1)]";

std::unique_ptr<Engine> loaded(const std::string& csv) {
  auto e = std::make_unique<Engine>(5);
  test::run(*e, model(csv));
  return e;
}

/// A directive or an API call. `prepare` does what must not fail (parsing) and returns the call itself.
struct Case {
  std::string name;
  std::function<std::function<void()>(Engine&)> prepare;
};

Case directive(const std::string& text) {
  return {text, [text](Engine& e) -> std::function<void()> {
            const auto file = std::make_shared<const SourceFile>(SourceFile{"oom.vnt", text});
            const std::vector<parser::DirectiveSyntax> program = parser::parse_program(file);
            REQUIRE(program.size() == 1);
            auto d = std::make_shared<Directive>(analyze_directive(program[0], e.params()));
            return [&e, d] { e.execute(std::move(*d)); };
          }};
}

Case observe_apply(const std::string& procedure, Value arg, Value observed) {
  return {fmt::format("observe_apply {} {}", procedure, to_string(arg)),
          [=](Engine& e) -> std::function<void()> { return [&e, procedure, arg, observed] {
            e.observe_apply(procedure, {arg}, observed);
          }; }};
}

#ifdef __SANITIZE_ADDRESS__
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

/// What running a case with allocation `at` failing as `shortage` says did.
enum class Outcome {
  kMadeFewer,  // the case made fewer allocations: it ran
  kFailed,     // out of memory, and the session goes on as if it had not run
  kRecovered,  // a failure nothing needed (a cache that could not grow): it ran
  kPoisoned,   // out of memory where nothing can undo it (a detach, say): the session refuses all after it
};

Outcome run_failing(Engine& e, const Case& c, size_t at, test::Shortage shortage) {
  const bool persist = shortage == test::Shortage::kForGood;
  const std::function<void()> call = c.prepare(e);
  std::exception_ptr thrown;
  bool failed = false;
  {
    // Memory short for good also fails the undoing of a half-made family, which the poisoned trace then leaks.
    test::LeaksIgnored ignored(persist);
    test::FailingNew failing(at, shortage);
    try {
      call();
    } catch (...) {
      thrown = std::current_exception();  // looked at once allocations work again
    }
    failed = failing.failed();
  }
  std::string message;
  std::vector<std::string> frames;
  try {
    if (thrown) std::rethrow_exception(thrown);
  } catch (const Error& err) {
    message = render_error_line(err);
    for (const ErrorFrame& f : err.frames()) frames.push_back(f.text);
  } catch (const std::bad_alloc&) {
    message = "unlocated: out of memory";  // with memory short for good, even the error's message
  }
  if (message.starts_with("unlocated")) {
    CHECK((persist || !c.name.starts_with("[")));  // the API's guard, or Engine::execute's, locates it
    return e.trace().poisoned() ? Outcome::kPoisoned : Outcome::kFailed;
  }
  if (!failed) {
    CHECK(message == "");
    return Outcome::kMadeFewer;
  }
  if (message.empty()) return Outcome::kRecovered;
  CAPTURE(message);
  CHECK(message.ends_with("out of memory"));
  // A directive's, located in it (the API's have no text), or at the application of the procedure that ran out
  // (a collapsed coin made for a new table during a move): "test.vnt:1:733: error: make_beta_bernoulli: out of memory".
  const bool in_procedure = message.starts_with("test.vnt:1:") && message.find(": error: make_") != std::string::npos;
  if (c.name.starts_with("[")) CHECK((message.starts_with("oom.vnt:1:") || in_procedure));
  const bool says_poisoned = !frames.empty() && frames.back() == Engine::kPoisonedNote;
  if (c.name.starts_with("[")) CHECK(says_poisoned == e.trace().poisoned());
  return e.trace().poisoned() ? Outcome::kPoisoned : Outcome::kFailed;
}

/// Engines whose trace out of memory left inconsistent: never destroyed, as they leak their nodes by design, and
/// kept reachable here, so that leak checkers do not count them.
std::vector<std::unique_ptr<Engine>>& kept_poisoned() {
  static auto* engines = new std::vector<std::unique_ptr<Engine>>;
  return *engines;
}

/// A session after the model, the case unless null, and kNext: its trace before and after kNext.
struct Clean {
  std::string before_next;
  std::string after_next;
};

Clean clean_session(const std::string& csv, const Case* c) {
  std::unique_ptr<Engine> e = loaded(csv);
  if (c != nullptr) c->prepare(*e)();
  Clean clean{test::fingerprint_of(*e), {}};
  test::run(*e, kNext);
  clean.after_next = test::fingerprint_of(*e);
  return clean;
}

/// Fails each allocation of the case in turn; returns how many runs left the trace poisoned.
size_t check_every_allocation(const std::string& csv, const Case& c, test::Shortage shortage) {
  CAPTURE(c.name);
  const Clean without = clean_session(csv, nullptr);
  const Clean with = clean_session(csv, &c);
  std::vector<size_t> wrong;  // the allocations whose failure left the session differing
  size_t poisoned = 0;
  // Memory short for good is tried at every third allocation under the sanitizers (all of them in Release): it is
  // the slowest test there, and make test has a time budget.
  const size_t stride = shortage == test::Shortage::kForGood && kSanitized ? 3 : 1;
  size_t at = 0;
  for (;; at += stride) {
    std::unique_ptr<Engine> e = loaded(csv);
    const size_t nodes = e->trace().live_nodes();
    const size_t records = e->directives().size();
    const Outcome outcome = run_failing(*e, c, at, shortage);
    if (outcome == Outcome::kMadeFewer) break;
    if (outcome == Outcome::kPoisoned) {
      ++poisoned;
      try {
        test::run(*e, kNext, "next.vnt");
        wrong.push_back(at);
      } catch (const Error& err) {
        if (render_error_line(err) != "next.vnt:1:1: error: " + std::string(Engine::kPoisoned)) wrong.push_back(at);
      }
      kept_poisoned().push_back(std::move(e));
      continue;
    }
    // Failed: as if it had not run. Recovered: as if nothing had failed.
    const Clean& as = outcome == Outcome::kFailed ? without : with;
    bool same = test::fingerprint_of(*e) == as.before_next;
    if (outcome == Outcome::kFailed)
      same = same && e->trace().live_nodes() == nodes && e->directives().size() == records;
    if (same) {
      test::run(*e, kNext);
      same = test::fingerprint_of(*e) == as.after_next;
    }
    if (!same) wrong.push_back(at);
  }
  // One string: doctest printed the address of a const char* that a conditional gave.
  MESSAGE(fmt::format("{}: {} allocations{}, {} left the trace poisoned", c.name, at, stride > 1 ? " or fewer" : "",
                      poisoned));
  CHECK_MESSAGE(wrong.empty(), "the session differs after failing allocations ",
                fmt::format("{}", fmt::join(wrong, " ")));
  CHECK(at > 0);
  return poisoned;
}

std::vector<Case> cases(const std::string& csv) {
  std::vector<Case> all;
  for (const char* text : {
           "[assume x (+ (f 3) (normal w 1) (scope_include 'q 0 (normal 0 1)))]",
           "[observe (g 4) 0.6]",
           "[observe (f 7) 0.2]",
           "p2: [predict (list (f 4) (coin) (* w 2))]",
           "[sample (+ (f 5) (normal w 1))]",
           "[forget p]",
           "[forget rows]",
           "[infer (mh default one 1)]",
           "[infer (mh s one 1)]",
           "[infer (mh k all 1)]",
           "[infer (gibbs t one 1)]",
           "[infer (mh t one 1)]",
           "[infer (pgibbs t ordered 2 1)]",
           "[infer (pgibbs k all 2 1)]",
           "[infer (mh ca all 1)]",
           "[observe (crp) 4]",
           "[infer (mh w all 'drift 0.3 1)]",
           "[infer (subsampled_mh w all 3 0.3 'drift 0.5 1)]",
           "[infer (subsampled_mh w all 3 0 1)]",
           "[infer (subsampled_mh w all 2 0.3 'drift 0.5 1 'proxy 'taylor)]",
           "[infer (mixture (1 (mh s one 1) 1 (subsampled_mh w all 3 0.3 1)) 1)]",
           "[infer (collect w (f 2) (g 1))]",
       })
    all.push_back(directive(text));
  all.push_back(directive("[observe_csv h \"" + csv + "\" y]"));  // a family per row: h reads a mem'd procedure
  all.push_back(observe_apply("y_x", make_vector(Eigen::VectorXd::Constant(1, 0.3)), Value(true)));  // the plate
  all.push_back(observe_apply("h", Value(0.3), Value(0.5)));
  return all;
}

TEST_CASE("out of memory at any allocation of a directive leaves the session as if it had not run") {
  // Not even in the steps that cannot be undone (saving what the detach of a proposal takes out, a restore, a
  // rollback): they run on the memory held in reserve for them (Trace::must_complete), so none poisons the trace.
  CsvFile csv;
  for (const Case& c : cases(csv.path.string()))
    CHECK_MESSAGE(check_every_allocation(csv.path.string(), c, test::Shortage::kOnce) == 0, c.name);
}

TEST_CASE("an allocation larger than the reserve poisons the trace only in a step that cannot be undone") {
  // Such steps are in the kernels' proposals and in the observes (which detach to constrain): a directive that
  // builds (assume, predict, a plate row) or takes apart for good (sample, forget, collect's samples) never poisons.
  const std::set<std::string> never_poisons = {
      "[assume x (+ (f 3) (normal w 1) (scope_include 'q 0 (normal 0 1)))]",
      "p2: [predict (list (f 4) (coin) (* w 2))]",
      "[sample (+ (f 5) (normal w 1))]",
      "[forget p]",
      "[forget rows]",
      "[infer (collect w (f 2) (g 1))]",
      "observe_apply y_x [0.3]",
  };
  CsvFile csv;
  size_t checked = 0, poisoned_in_all = 0;
  for (const Case& c : cases(csv.path.string())) {
    const size_t poisoned = check_every_allocation(csv.path.string(), c, test::Shortage::kBeyondReserve);
    poisoned_in_all += poisoned;
    if (never_poisons.contains(c.name)) {
      CHECK_MESSAGE(poisoned == 0, c.name);
      ++checked;
    }
  }
  CHECK(checked == never_poisons.size());
  CHECK(poisoned_in_all > 0);  // the refusal after a poisoned step is exercised
}

// Memory that stays short: every allocation from number k on fails, the undoing of the failed step's too, but for
// what the reserve's new-handler frees. Some runs may end poisoned, but none may crash or go on from an
// inconsistent trace.
TEST_CASE("out of memory from any allocation of a directive on never leaves a session going on inconsistent") {
  CsvFile csv;
  for (const Case& c : cases(csv.path.string()))
    check_every_allocation(csv.path.string(), c, test::Shortage::kForGood);
}

}  // namespace
}  // namespace vnt::allocation_failure_tests
