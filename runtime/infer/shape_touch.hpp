// The end of a kernel's move: the trace's shape epoch moves unless the move kept every procedure where it was.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <exception>

#include "runtime/trace/trace.hpp"

namespace vnt {

/// Moves the trace's shape epoch when left, unless `keep` was set and no exception is leaving: a move that changes
/// which procedures applications use (or fails half way) makes the caches of subsampled kernels start again; other
/// changes log their edges themselves (resamples_procedures).
struct ShapeTouch {
  Trace& trace;
  bool keep = false;
  int exceptions = std::uncaught_exceptions();
  ~ShapeTouch() {
    if (!keep || std::uncaught_exceptions() > exceptions) trace.touch_shape();
  }
};

}  // namespace vnt
