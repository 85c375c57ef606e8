// Out of memory through the embedding API: a RuntimeError, and a runtime that then either goes on as before or,
// poisoned, refuses every later call with a clear message (docs/api.md).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <string>
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

// forget of a predict whose family holds two mem'd families. Copying its record (a label too long to be stored
// in place) fails cleanly; its teardown poisons.
constexpr const char* kLabel = "sum_of_two_memoized_draws";

TEST_CASE("a Runtime call that runs out of memory throws, and a poisoned runtime refuses the next call") {
  size_t clean = 0, poisoned = 0;
  for (size_t at = 0;; ++at) {
    CAPTURE(at);
    Options options;
    options.seed = 3;
    auto rt = std::make_unique<Runtime>(options);
    rt->execute(std::string("[assume f (mem (lambda (i) (normal 0 1)))] ") + kLabel + ": [predict (+ (f 1) (f 2))]");
    const double p = std::get<double>(rt->report(kLabel).value);
    std::optional<RuntimeError> error;
    bool failed = false;
    {
      test::FailingNew failing(at, false);
      try {
        rt->forget(kLabel);
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
    CHECK(error->kind() == "domain error");
    CHECK(error->message() == "out of memory");
    std::optional<RuntimeError> refused;
    try {
      (void)rt->report(kLabel);
    } catch (const RuntimeError& e) {
      refused = e;
    }
    if (!refused) {
      CHECK(std::get<double>(rt->report(kLabel).value) == p);  // as if the forget had not run
      rt->forget(kLabel);
      ++clean;
      continue;
    }
    CHECK(refused->kind() == "domain error");
    CHECK(refused->message() == Engine::kPoisoned);
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
