// Out of memory through the embedding API: a RuntimeError, and a runtime that then either goes on as before or,
// poisoned, refuses every later call with a clear message (docs/api.md).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/engine/engine.hpp"
#include "tests/fault/failing_new.hpp"
#include "vnt/vnt.hpp"

namespace vnt::runtime_api_oom_tests {
namespace {

/// Runtimes left poisoned: never destroyed (they leak their trace by design), and kept reachable.
std::vector<std::unique_ptr<Runtime>>& kept_poisoned() {
  static auto* runtimes = new std::vector<std::unique_ptr<Runtime>>;
  return *runtimes;
}

size_t occurrences(std::string_view text, std::string_view part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string_view::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

// An MH step on one of two mem'd draws that a labelled predict adds up. Saving the values its detach takes out can
// run out of memory, where nothing undoes it: with an allocation larger than the memory held in reserve for such
// steps, the trace is poisoned. Elsewhere the step fails cleanly.
constexpr const char* kLabel = "sum_of_two_memoized_draws";
constexpr const char* kStep = "(mh default one 1)";

TEST_CASE("a Runtime call that runs out of memory throws, and a poisoned runtime refuses the next call") {
  // Runtime::infer, and the same directive through execute, whose Engine::execute adds the note itself.
  std::function<void(Runtime&)> step = [](Runtime& rt) { rt.infer(kStep); };
  SUBCASE("infer") {}
  const std::string directive = std::string("[infer ") + kStep + "]";  // made before allocations fail
  SUBCASE("execute") { step = [&directive](Runtime& rt) { rt.execute(directive); }; }
  const std::string model = std::string("[assume f (mem (lambda (i) (normal 0 1)))] ") + kLabel +
                            ": [predict (+ (f 1) (f 2))]";
  // Once first, so that ANTLR's cache has learnt the step's text: an allocation larger than the reserve cannot
  // happen where ANTLR holds its lock (a few DFA states), and one there that the reserve could not help would hang
  // every later parse (runtime/core/oom_reserve.hpp).
  {
    Runtime warm;
    warm.execute(model);
    step(warm);
  }
  size_t clean = 0, poisoned = 0;
  for (size_t at = 0;; ++at) {
    CAPTURE(at);
    Options options;
    options.seed = 3;
    auto rt = std::make_unique<Runtime>(options);
    rt->execute(model);
    const double p = std::get<double>(rt->report(kLabel).value);
    std::optional<RuntimeError> error;
    bool failed = false;
    {
      // The failure can be in the parse of the call's text, inside ANTLR, which is not exception safe there and
      // leaks its objects. ANTLR's allocations are small, so the reserve takes them (the other cases test that,
      // and that nothing leaks); this test's allocations larger than the reserve get there too.
      test::LeaksIgnored ignored(true);
      test::FailingNew failing(at, test::Shortage::kBeyondReserve);
      try {
        step(*rt);
      } catch (const RuntimeError& e) {
        error = e;
      }
      failed = failing.failed();
    }
    if (!failed) {
      CHECK(!error);
      break;
    }
    REQUIRE(error);
    CHECK(error->kind() == "out of memory");
    CHECK(error->message().starts_with("out of memory"));  // through execute: "... while reading this input ..."
    const size_t notes = occurrences(error->what(), Engine::kPoisonedNote);
    CHECK(notes <= 1);
    const bool says_poisoned = notes == 1;
    std::optional<RuntimeError> refused;
    try {
      (void)rt->report(kLabel);
    } catch (const RuntimeError& e) {
      refused = e;
    }
    CHECK(says_poisoned == refused.has_value());  // the failing call itself says the runtime cannot go on
    if (!refused) {
      CHECK(std::get<double>(rt->report(kLabel).value) == p);  // as if the step had not run
      rt->infer(kStep);                                         // and the runtime goes on
      ++clean;
      continue;
    }
    CHECK(refused->kind() == "domain error");
    CHECK(refused->message() == Engine::kPoisoned);
    CHECK(occurrences(refused->what(), Engine::kPoisonedNote) == 0);  // it was the call before that ran out
    const std::string message(Engine::kPoisoned);
    CHECK_THROWS_WITH_AS(rt->execute("[assume x 1]"), doctest::Contains(message.c_str()), RuntimeError);
    kept_poisoned().push_back(std::move(rt));
    ++poisoned;
  }
  CHECK(clean >= 1);
  CHECK(poisoned >= 1);
}

}  // namespace
}  // namespace vnt::runtime_api_oom_tests
