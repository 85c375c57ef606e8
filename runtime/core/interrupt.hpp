// Long work inside one builtin call (a large matrix product, a large file being read) can stop on an interrupt
// too. It sees no trace, so what runs a directive installs, per thread, the check that stops it, and the work
// polls between pieces of itself.
// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace vnt {

/// Runs this thread's innermost installed check, which throws to stop the work; does nothing without one.
void poll_interrupt();

/// Installs `check(context)` as this thread's interrupt check while it lives (scopes nest).
class InterruptScope {
 public:
  using Check = void (*)(const void* context);
  InterruptScope(Check check, const void* context);
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  Check prev_check_;
  const void* prev_context_;
};

}  // namespace vnt
