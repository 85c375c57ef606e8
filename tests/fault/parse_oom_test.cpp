// Out of memory while parsing: the parse fails with std::bad_alloc, and the next parse runs. ANTLR locks its DFA
// cache by hand around allocations, so without the reserve of runtime/core/oom_reserve.hpp a failure there left
// the lock held and the next parse waited for it forever (the REPL hung at its next line).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>

#include "parser/syntax.hpp"
#include "runtime/core/diagnostics.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/oom_reserve.hpp"
#include "runtime/engine/engine.hpp"
#include "runtime/core/source_text.hpp"
#include "tests/fault/failing_new.hpp"

namespace vnt::parse_oom_tests {
namespace {

// Every kind of token and directive, so that a parse from an empty DFA cache fills much of it.
constexpr const char* kProgram =
    "; the model\n"
    "[assume w (multivariate_normal (zeros 3) (* 0.1 (id_matrix 3)))]\n"
    "obs: [observe (normal (lookup w 0) 1.5e-3) -2]\n"
    "[predict (list 'a \"text\\n\" '(1 b) {n} (lambda (x) (if (< x .5) true false)))]\n"
    "[infer (subsampled_mh default one 100 0.01 'drift 0.1 10)]\n";

constexpr const char* kExpression = "(cycle ((mh 'w 0 1) (subsampled_mh default one 100 0.01 'drift 0.1)) 10)";

// A failure stops the parse at its next token or rule, well within the reserve (25 KB at most here, from an empty
// DFA cache; 186 KB, most of the parse, without the checkpoints).
constexpr size_t kMostAfter = OomReserve::kBytes / 4;

// A parse that does not finish in this time waits for a lock that a failed parse left held.
constexpr unsigned kHangSeconds = 60;

extern "C" void on_hang(int) {
  constexpr char kMessage[] = "parse_oom_test: a parse after one that ran out of memory never finished (deadlock)\n";
  (void)!write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  std::_Exit(1);
}

std::shared_ptr<const SourceFile> source(const char* text) {
  return std::make_shared<const SourceFile>(SourceFile{"oom.vnt", text});
}

// Under the sanitizers every allocation takes several times longer: every third one is failed there.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
constexpr size_t kStride = 3;
#else
constexpr size_t kStride = 1;
#endif

/// Fails each allocation of parse(), from an empty DFA cache, in turn, as `shortage` says; after each, the same
/// parse must run to its end. Returns how many allocations were failed.
template <class Parse>
size_t fail_each_allocation(const char* text, test::Shortage shortage, Parse&& parse) {
  const auto file = source(text);
  std::signal(SIGALRM, on_hang);
  size_t at = 0, most_after = 0;
  for (;; at += kStride) {
    CAPTURE(at);
    parser::detail::forget_learnt_parses();
    bool failed = false;
    bool threw_bad_alloc = false;
    size_t after = 0;
    std::string what;
    {
      test::FailingNew failing(at, shortage);
      try {
        parse(file);
      } catch (const std::bad_alloc&) {
        threw_bad_alloc = true;
      } catch (const std::exception& e) {
        what = e.what();
      }
      failed = failing.failed();
      after = failing.bytes_after_failure();
    }
    if (!failed) break;
    // Where ANTLR itself allocated, it goes on with the reserve's memory to its next checkpoint (the next token or
    // rule), which throws.
    CAPTURE(what);
    CHECK(threw_bad_alloc);
    most_after = std::max(most_after, after);
    alarm(kHangSeconds);
    parse(file);
    alarm(0);
  }
  std::signal(SIGALRM, SIG_DFL);
  MESSAGE("at most ", most_after, " bytes allocated after a failure (", at, " allocations in the parse)");
  CHECK(most_after <= kMostAfter);
  return at;
}

TEST_CASE("a parse that runs out of memory fails with bad_alloc and leaves the parser usable") {
  test::Shortage shortage = test::Shortage::kOnce;
  SUBCASE("one allocation fails") {}
  SUBCASE("memory short for good") { shortage = test::Shortage::kForGood; }
  const size_t program =
      fail_each_allocation(kProgram, shortage, [](const auto& file) { (void)parser::parse_program(file); });
  // The embedding API's and the inference language's path.
  const size_t expression = fail_each_allocation(kExpression, shortage, [](const auto& file) {
    (void)parser::parse_expression(file);
  });
  CHECK(program > 100);  // the loop ran: a parse makes hundreds
  CHECK(expression > 10);
}

TEST_CASE("an input that runs out of memory before it runs says so at its first line, and nothing in it ran") {
  const auto file = source("[assume x (normal 0 1)]\n[predict (+ x 1)]\n");
  size_t reading = 0, checking = 0;
  for (size_t at = 0;; ++at) {
    CAPTURE(at);
    parser::detail::forget_learnt_parses();
    Engine e(1);
    std::string message;
    bool failed = false;
    {
      test::FailingNew failing(at, test::Shortage::kOnce);
      try {
        e.run_source(file, true);
      } catch (const Error& err) {
        message = render_error_line(err);
      }
      failed = failing.failed();
    }
    if (!failed || !e.directives().empty()) break;  // it ran; running out of memory there: allocation_failure_test
    CAPTURE(message);
    if (message == "oom.vnt:1:1: error: out of memory while reading this input: nothing in it ran") {
      ++reading;
    } else {  // the check of every directive before the first runs (language.md)
      CHECK((message == "oom.vnt:1:1: error: out of memory" || message == "oom.vnt:2:1: error: out of memory"));
      ++checking;
    }
    e.run_source(file);  // as if the failed input had not been given
    CHECK(e.directives().size() == 2);
  }
  CHECK(reading > 100);
  CHECK(checking > 10);
}

}  // namespace
}  // namespace vnt::parse_oom_tests
