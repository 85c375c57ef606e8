// Ctrl-C (SIGINT) in pprun: a flag the engine polls, so that the directive running stops with an error instead of
// the process ending and taking the trace and the draws with it.
// SPDX-License-Identifier: Apache-2.0
#include <atomic>
#include <csignal>

#include "runtime/cli/cli.hpp"
#include "runtime/engine/engine.hpp"

namespace vnt::cli {
namespace {

std::atomic<bool> requested{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

void on_interrupt(int /*signal*/) { requested.store(true, std::memory_order_relaxed); }

}  // namespace

void catch_interrupts(Engine& engine, InterruptMode mode) {
  install_interrupt_handler(mode);
  watch_interrupts(engine);
}

void install_interrupt_handler(InterruptMode mode) {
  struct sigaction old = {};
  sigaction(SIGINT, nullptr, &old);
  // A shell starts background jobs with SIGINT ignored: Ctrl-C is meant for the job in front, not this one.
  if (mode == InterruptMode::kRun && old.sa_handler == SIG_IGN) return;
  struct sigaction action = {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  // The REPL: a read at the prompt goes on (Ctrl-C there is forgotten before the next input), and every Ctrl-C is
  // caught. A run: the first Ctrl-C is caught, a second one ends the process at once (the default action), in
  // case the run is stuck where nothing polls the flag.
  action.sa_flags = mode == InterruptMode::kRepl ? SA_RESTART : SA_RESETHAND;
  sigaction(SIGINT, &action, nullptr);
}

// Harmless where no handler was installed (a background job): nothing sets the flag then.
void watch_interrupts(Engine& engine) { engine.set_interrupt(&requested, "interrupted (Ctrl-C)"); }

bool interrupt_requested() { return requested.load(std::memory_order_relaxed); }

void clear_interrupt() { requested.store(false, std::memory_order_relaxed); }

[[noreturn]] void end_as_interrupted() {
  std::fflush(nullptr);
  std::signal(SIGINT, SIG_DFL);
  std::raise(SIGINT);
  std::_Exit(128 + SIGINT);  // not reached: SIGINT's default action ends the process
}

}  // namespace vnt::cli
