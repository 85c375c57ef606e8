// The per-thread interrupt check polled by long work that sees no trace.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/core/interrupt.hpp"

namespace vnt {
namespace {

thread_local InterruptScope::Check t_check = nullptr;
thread_local const void* t_context = nullptr;

}  // namespace

void poll_interrupt() {
  if (t_check != nullptr) t_check(t_context);
}

InterruptScope::InterruptScope(Check check, const void* context) : prev_check_(t_check), prev_context_(t_context) {
  t_check = check;
  t_context = context;
}

InterruptScope::~InterruptScope() {
  t_check = prev_check_;
  t_context = prev_context_;
}

}  // namespace vnt
