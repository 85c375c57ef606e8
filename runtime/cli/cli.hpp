// Shared pieces of the pprun command line tool.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "runtime/syntax/analyze.hpp"

namespace vnt::cli {

struct Options {
  std::string file;
  uint64_t seed = 0;
  ParamMap params;
  std::string draws_path;
  int max_depth = 20000;
  bool quiet = false;
};

/// Runs fn, printing a vnt::Error as a diagnostic; returns fn's result, 2 for user errors, 1 for internal ones.
int guarded(const std::function<int()>& fn);

/// The interactive loop: each input is one or more directives; errors are reported and the session goes on.
int run_repl(const Options& o);

}  // namespace vnt::cli
