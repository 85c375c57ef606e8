// Makes the global operator new fail on purpose: the fault tests' executable replaces it (failing_new.cpp).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

namespace vnt::test {

/// How memory runs short when allocation number `at` fails.
enum class Shortage {
  kOnce,     // that allocation fails, once: tried again after the new-handler, it succeeds
  kForGood,  // it and all after it fail, but for the memory a new-handler frees, which can be allocated again
  kBeyondReserve,  // that allocation only, but tried again after the new-handler, it fails again: it is larger
                   // than what the handler frees (runtime/core/oom_reserve.hpp)
};

/// While one lives, allocation number `at` (0 for the next one) fails as `shortage` says. A failure calls the
/// new-handler if there is one, as the standard operator new does, else throws std::bad_alloc. The test's own
/// checks run after it is gone.
class FailingNew {
 public:
  FailingNew(std::size_t at, Shortage shortage);
  ~FailingNew();
  FailingNew(const FailingNew&) = delete;
  FailingNew& operator=(const FailingNew&) = delete;
  /// Whether an allocation failed: if not, the code under test made fewer than at + 1 allocations.
  bool failed() const;
  /// How many bytes were allocated after the first failure (by one that failed and a new-handler let through too).
  std::size_t bytes_after_failure() const;
};

/// While one lives (and `on`), LeakSanitizer does not report what is allocated.
class LeaksIgnored {
 public:
  explicit LeaksIgnored(bool on) : on_(on) {
#ifdef __SANITIZE_ADDRESS__
    if (on_) __lsan_disable();
#endif
  }
  ~LeaksIgnored() {
#ifdef __SANITIZE_ADDRESS__
    if (on_) __lsan_enable();
#endif
  }
  LeaksIgnored(const LeaksIgnored&) = delete;
  LeaksIgnored& operator=(const LeaksIgnored&) = delete;

 private:
  bool on_;
};

}  // namespace vnt::test
