// The stack pprun evaluates on, and the evaluation depth it can hold: deep recursion ends in an error
// (Trace::max_eval_depth), never in a stack overflow, whatever stack the system grants.
// SPDX-License-Identifier: Apache-2.0
#include <pthread.h>
#include <sys/resource.h>

#include <algorithm>
#include <climits>

#include "runtime/cli/cli.hpp"

namespace vnt::cli {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Stack one level of evaluation depth (one nested application) may take. Measured by painting a 1 GiB thread
// stack and reading its high-water mark after runaway recursions (plain, through mem, through if, through let,
// with five arguments; one level nests eval_family -> apply -> eval_requests -> eval_family, twice that through
// mem) and after mh over a trace 20000 levels deep, at max depths 2000 and 20000: at most 1.7 KiB per level in a
// Debug build, 3.0 KiB in a Debug ASan+UBSan build (Release frames are smaller); 4.6 KiB with ASan at -O1 (below).
// 8 KiB is 1.7 times the worst.
constexpr size_t kStackPerLevel = 8 << 10;
// Stack for what the depth bound does not count: parsing (1000 nested lists, the parser's limit, took 1.2 MiB in
// Debug, 1.3 MiB with ASan), the frames below evaluation, output.
constexpr size_t kStackReserve = 2 * kMiB;
// Under AddressSanitizer an exception thrown from more than 64 MiB deep in a stack leaves stale poison
// (google/sanitizers#189): the depth error of a runaway recursion became a false stack-buffer-overflow report.
// There the bound is what 64 MiB holds at 5 KiB per level (about 12 700). make test's ASan build (-O1, where
// inlined locals keep their own slots for use-after-scope checks) takes 4.6 KiB per level through mem, 4.3 KiB
// plain, through let and with five arguments, 3.5 KiB through if: the stack at the throw that ASan reports, at
// depth 30000. (At -O0 it was at most 3.0 KiB.)
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kSanitizedStack = 64 * kMiB;
constexpr size_t kSanitizedPerLevel = 5 << 10;
#endif
// Thread stacks to try, largest first: a large one can be refused (address-space limits, strict overcommit).
constexpr size_t kStackSizes[] = {1024 * kMiB, 256 * kMiB, 64 * kMiB};

struct ThreadCall {
  const std::function<int(size_t)>& fn;
  size_t stack_bytes;
  int result = 1;
};

void* thread_main(void* p) {
  auto* call = static_cast<ThreadCall*>(p);
  call->result = call->fn(call->stack_bytes);
  return nullptr;
}

/// The main thread's stack (its soft limit; 8 MiB if unlimited, since growth may then stop at any mapping),
/// less what main has used before calling here.
size_t main_thread_stack() {
  rlimit r{};
  size_t limit = 8 * kMiB;
  if (getrlimit(RLIMIT_STACK, &r) == 0 && r.rlim_cur != RLIM_INFINITY) limit = static_cast<size_t>(r.rlim_cur);
  constexpr size_t kUsedByMain = 256 << 10;
  return limit > kUsedByMain ? limit - kUsedByMain : 0;
}

}  // namespace

int max_depth_for_stack(size_t stack_bytes) {
  if (stack_bytes <= kStackReserve + kStackPerLevel) return 1;
  size_t levels = (stack_bytes - kStackReserve) / kStackPerLevel;
#if defined(__SANITIZE_ADDRESS__)
  levels = std::min(levels, (kSanitizedStack - kStackReserve) / kSanitizedPerLevel);
#endif
  return static_cast<int>(std::min<size_t>(levels, INT_MAX));
}

int run_on_eval_stack(const std::function<int(size_t)>& fn) {
  for (size_t bytes : kStackSizes) {
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) break;
    ThreadCall call{fn, bytes};
    pthread_t th;
    bool started = pthread_attr_setstacksize(&attr, bytes) == 0 && pthread_create(&th, &attr, thread_main, &call) == 0;
    pthread_attr_destroy(&attr);
    if (started) {
      pthread_join(th, nullptr);
      return call.result;
    }
  }
  return fn(main_thread_stack());
}

}  // namespace vnt::cli
