// Running a test body on a thread with a stack of a chosen size (small, to show a walk needs none; large, for
// deep recursion).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <doctest/doctest.h>
#include <pthread.h>

#include <exception>
#include <functional>

namespace vnt::test {

/// Runs fn on a thread with a stack of `bytes`, rethrowing what it throws.
inline void on_stack_of(size_t bytes, const std::function<void()>& fn) {
  struct Call {
    const std::function<void()>* fn;
    std::exception_ptr error;
  } call{&fn, nullptr};
  pthread_attr_t attr;
  REQUIRE(pthread_attr_init(&attr) == 0);
  REQUIRE(pthread_attr_setstacksize(&attr, bytes) == 0);
  pthread_t th;
  auto body = [](void* p) -> void* {
    auto* c = static_cast<Call*>(p);
    try {
      (*c->fn)();
    } catch (...) {
      c->error = std::current_exception();
    }
    return nullptr;
  };
  REQUIRE(pthread_create(&th, &attr, body, &call) == 0);
  pthread_join(th, nullptr);
  pthread_attr_destroy(&attr);
  if (call.error) std::rethrow_exception(call.error);
}

}  // namespace vnt::test
