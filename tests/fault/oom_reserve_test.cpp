// OomReserve on its own: the new-handler gives the reserve back only while one lives, hands every other failure to
// the handler installed before it, and a reserve that cannot be taken back throws or is done without (Retake).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <new>

#include "runtime/core/oom_reserve.hpp"
#include "tests/fault/failing_new.hpp"

namespace vnt::oom_reserve_tests {
namespace {

int application_handler_calls = 0;

void application_handler() {
  ++application_handler_calls;
  throw std::bad_alloc();
}

/// Whether an allocation of 16 bytes succeeds.
bool allocates() {
  try {
    ::operator delete(::operator new(16));
    return true;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

/// Allocation number 0 from now on fails once; returns whether the allocation of 16 bytes then succeeded.
bool allocate_with_one_failure() {
  test::FailingNew failing(0, test::Shortage::kOnce);
  return allocates();
}

/// Spends the reserve: one failure inside an OomReserve.
void spend_reserve() {
  OomReserve reserve;
  REQUIRE(allocate_with_one_failure());
  CHECK_THROWS_AS(OomReserve::checkpoint(), std::bad_alloc);
}

TEST_CASE("the reserve's new-handler helps only inside a reserve, and hands other failures to the one before it") {
  const std::new_handler before = std::set_new_handler(&application_handler);
  { OomReserve installs; }  // puts vnt's handler in front of the application's
  CHECK((std::get_new_handler() != &application_handler));
  application_handler_calls = 0;

  CHECK_FALSE(allocate_with_one_failure());  // no reserve alive: the application's handler throws
  CHECK(application_handler_calls == 1);

  spend_reserve();  // the allocation succeeded on the reserve, and the application's handler was not called
  CHECK(application_handler_calls == 1);

  {
    OomReserve taken_back;  // the next outermost reserve takes it back
    OomReserve::checkpoint();
    CHECK(allocate_with_one_failure());
  }
  CHECK(application_handler_calls == 1);
  std::set_new_handler(before);
}

TEST_CASE("a reserve that cannot be taken back throws before its work, or is done without") {
  spend_reserve();
  SUBCASE("Retake::kOrThrow (a parse)") {
    test::FailingNew failing(0, test::Shortage::kOnce);
    CHECK_THROWS_AS(OomReserve(OomReserve::Retake::kOrThrow), std::bad_alloc);
  }
  SUBCASE("Retake::kIfAble (a step of the trace that must run)") {
    {
      test::FailingNew failing(0, test::Shortage::kForGood);
      OomReserve reserve(OomReserve::Retake::kIfAble);  // cannot take it back: goes on without one
      CHECK_FALSE(allocates());                          // nothing in reserve to help it
    }
    OomReserve reserve(OomReserve::Retake::kIfAble);  // the next outermost one takes it back
    CHECK(allocate_with_one_failure());
  }
}

}  // namespace
}  // namespace vnt::oom_reserve_tests
