// The replaceable global allocation functions ([new.delete]), with a failure that a FailingNew places. Nothing in
// the runtime uses threads, so plain counters do.
// SPDX-License-Identifier: Apache-2.0
#include "tests/fault/failing_new.hpp"

#include <cstdlib>
#include <new>

namespace {

struct Plan {
  bool armed = false;
  bool persist = false;
  bool failed = false;
  std::size_t left = 0;  // allocations to make before the failure
} plan;
std::size_t failures = 0;  // in all: a debugger can stop at failure number N

void fail_if_due() {
  if (!plan.armed) return;
  if (plan.left > 0) {
    --plan.left;
    return;
  }
  plan.failed = true;
  ++failures;
  if (!plan.persist) plan.armed = false;
  throw std::bad_alloc();
}

void* allocate(std::size_t n) {
  fail_if_due();
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}

void* allocate_aligned(std::size_t n, std::align_val_t a) {
  fail_if_due();
  const auto align = static_cast<std::size_t>(a);
  // aligned_alloc wants a multiple of the alignment
  if (void* p = std::aligned_alloc(align, (n + align - 1) / align * align)) return p;
  throw std::bad_alloc();
}

}  // namespace

namespace vnt::test {

FailingNew::FailingNew(std::size_t at, bool persist_after) {
  plan = Plan{.armed = true, .persist = persist_after, .failed = false, .left = at};
}

FailingNew::~FailingNew() { plan.armed = false; }

bool FailingNew::failed() const { return plan.failed; }

}  // namespace vnt::test

void* operator new(std::size_t n) { return allocate(n); }
void* operator new[](std::size_t n) { return allocate(n); }
void* operator new(std::size_t n, std::align_val_t a) { return allocate_aligned(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return allocate_aligned(n, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
