// Shared pieces of the pprun command line tool.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "runtime/syntax/analyze.hpp"

namespace vnt {
class Draws;
class Engine;
struct SourceFile;
}

namespace vnt::cli {

struct Options {
  std::string file;
  uint64_t seed = 0;
  ParamMap params;
  std::string draws_path;
  int max_depth = 20000;
  int max_depth_limit = 20000;  // the most evaluation depth the stack pprun runs on holds
  bool quiet = false;
  unsigned chains = 1;  // --chains: independent runs of the program, seeds seed, seed + 1, ...
};

/// Runs fn(stack_bytes) on a thread with the largest stack it can create (1 GiB, else 256 MiB, else 64 MiB), or
/// else on the calling thread; stack_bytes is the stack fn has. Returns fn's result.
int run_on_eval_stack(const std::function<int(size_t)>& fn);

/// The most evaluation depth (Trace::max_eval_depth) that a stack of this many bytes holds without overflowing.
int max_depth_for_stack(size_t stack_bytes);

/// The line pprun prints for the value of a predict or sample directive: `value`, or `label: value` when
/// labelled; print_output prints it on stdout.
std::string format_output(const Value& v, const Directive& d);
void print_output(const Value& v, const Directive& d);

/// Refuses, before a run, a --draws path that is the program file or cannot be written (nothing without one).
void check_draws_path(const Options& o);
/// Writes draws as CSV (Draws::write_csv) to `path`; an i/o error if it cannot.
void write_draws(const std::string& path, const Draws& draws);

/// Runs o.chains independent chains of the program (seeds o.seed, o.seed + 1, ...) in parallel, then prints each
/// chain's output, a summary of all the chains' draws with R-hat, the kernel report of all of them and the errors
/// of the chains that failed. Returns the exit status (2 if a chain failed, 1 for an internal error).
int run_chains(const Options& o, const std::shared_ptr<const SourceFile>& file);

/// Runs fn, printing a vnt::Error as a diagnostic; returns fn's result, 2 for user errors, 1 for internal ones.
int guarded(const Options& o, const std::function<int()>& fn);

enum class InterruptMode {
  kRepl,  // every Ctrl-C stops the directive running; the session goes on
  kRun,   // the first Ctrl-C stops the directive running, a second one ends the process
};

/// Makes SIGINT (Ctrl-C) set a flag that `engine` polls, so the directive running fails with "interrupted
/// (Ctrl-C)" (an [infer] keeps the transitions it made and the draws it collected). In kRun mode nothing is
/// installed if SIGINT is ignored (a background job).
void catch_interrupts(Engine& engine, InterruptMode mode);
/// catch_interrupts in two steps, for several engines (chains): the handler once, then each engine polls the flag.
void install_interrupt_handler(InterruptMode mode);
void watch_interrupts(Engine& engine);
/// Whether Ctrl-C was pressed since the last clear_interrupt().
bool interrupt_requested();
void clear_interrupt();
/// Ends the process as SIGINT's default action does (status 130 in a shell), after flushing the output, so that
/// a shell running pprun in a loop stops too.
[[noreturn]] void end_as_interrupted();

/// The interactive loop: each input is one or more directives; errors are reported and the session goes on.
int run_repl(const Options& o);

}  // namespace vnt::cli
