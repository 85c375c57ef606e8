// Makes the global operator new fail on purpose: the fault tests' executable replaces it (failing_new.cpp).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

namespace vnt::test {

/// While one lives, allocation number `at` (0 for the next one) fails; with `persist`, so do all after it, as when
/// memory stays short, but for the memory a new-handler frees, which can be allocated again. A failure calls the
/// new-handler if there is one, as the standard operator new does, else throws std::bad_alloc. The test's own
/// checks run after it is gone.
class FailingNew {
 public:
  FailingNew(std::size_t at, bool persist);
  ~FailingNew();
  FailingNew(const FailingNew&) = delete;
  FailingNew& operator=(const FailingNew&) = delete;
  /// Whether an allocation failed: if not, the code under test made fewer than at + 1 allocations.
  bool failed() const;
  /// How many bytes were allocated after the first failure (by one that failed and a new-handler let through too).
  std::size_t bytes_after_failure() const;
};

}  // namespace vnt::test
