// The replaceable global allocation functions ([new.delete]), with a failure that a FailingNew places. Nothing in
// the runtime uses threads, so plain counters do.
// SPDX-License-Identifier: Apache-2.0
#include "tests/fault/failing_new.hpp"

#include <malloc.h>

#include <cstdlib>
#include <new>

namespace {

struct Plan {
  bool live = false;   // a FailingNew exists
  bool armed = false;
  vnt::test::Shortage shortage = vnt::test::Shortage::kOnce;
  bool failed = false;
  std::size_t left = 0;    // allocations to make before the failure
  std::size_t credit = 0;  // bytes a new-handler freed, which can be allocated again while memory stays short
  std::size_t after = 0;   // bytes allocated after the first failure (by one a new-handler let through too)
} plan;
std::size_t failures = 0;  // in all: a debugger can stop at failure number N
bool in_handler = false;

bool fails_now(std::size_t n) {
  if (!plan.armed) return false;
  if (plan.left > 0) {
    --plan.left;
    return false;
  }
  if (plan.failed && plan.credit >= n) {
    plan.credit -= n;
    return false;
  }
  plan.failed = true;
  ++failures;
  if (plan.shortage != vnt::test::Shortage::kForGood) plan.armed = false;
  return true;
}

// As the standard operator new: when memory runs out, the new-handler (if any) frees some or throws, and the
// allocation is tried again.
template <class Malloc>
void* allocate_with(std::size_t n, Malloc&& malloc) {
  bool failing = false;  // this allocation failed: with Shortage::kBeyondReserve, it fails each time it is tried
  for (;;) {
    const bool fails = fails_now(n) || (failing && plan.shortage == vnt::test::Shortage::kBeyondReserve);
    failing = failing || fails;
    if (!fails) {
      if (void* p = malloc()) {
        if (plan.live && plan.failed) plan.after += n;
        return p;
      }
    }
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    struct InHandler {
      InHandler() { in_handler = true; }
      ~InHandler() { in_handler = false; }
    } scope;
    handler();
  }
}

void* allocate(std::size_t n) {
  return allocate_with(n, [n] { return std::malloc(n == 0 ? 1 : n); });
}

void* allocate_aligned(std::size_t n, std::align_val_t a) {
  const auto align = static_cast<std::size_t>(a);
  // aligned_alloc wants a multiple of the alignment
  return allocate_with(n, [n, align] { return std::aligned_alloc(align, (n + align - 1) / align * align); });
}

void release(void* p) {
  if (in_handler && plan.armed && p != nullptr) plan.credit += malloc_usable_size(p);
  std::free(p);
}

}  // namespace

namespace vnt::test {

FailingNew::FailingNew(std::size_t at, Shortage shortage) {
  plan = Plan{.live = true, .armed = true, .shortage = shortage, .failed = false, .left = at, .credit = 0,
              .after = 0};
}

FailingNew::~FailingNew() {
  plan.live = false;
  plan.armed = false;
}

bool FailingNew::failed() const { return plan.failed; }

std::size_t FailingNew::bytes_after_failure() const { return plan.after; }

}  // namespace vnt::test

void* operator new(std::size_t n) { return allocate(n); }
void* operator new[](std::size_t n) { return allocate(n); }
void* operator new(std::size_t n, std::align_val_t a) { return allocate_aligned(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return allocate_aligned(n, a); }
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { release(p); }
