// One step of an SP at an application of the trace, with the errors it raises located there.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <fmt/format.h>

#include <new>

#include "runtime/core/error.hpp"
#include "runtime/core/source_span.hpp"
#include "runtime/sp/sp.hpp"

namespace vnt {

struct Node;

/// Where the expression that made `n` is in the source (unknown for a node no expression made).
SourceSpan span_of(const Node* n);

/// Runs one step of an SP (simulate, log_density) at the application `at`: SP errors get its span, and an
/// allocation that fails (a huge size the SP did not reject) is the program's error there too (§7.5), of its own
/// kind: a kernel that took it for a domain error would reject the proposal, or weigh a particle zero, and go on.
/// Regen and the sections scored from values (chains, sections evaluated in place) locate errors alike. The span is
/// made only for an error: a copy holds its file, one atomic count more and less per step on the hot path.
template <class F>
auto at_application(const Sp& sp, const Node* at, F&& step) -> decltype(step()) {
  try {
    return step();
  } catch (Error& e) {
    e.attach_span(span_of(at));
    throw;
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::kOutOfMemory, fmt::format("{}: out of memory", sp.name()), span_of(at));
  }
}

}  // namespace vnt
