// One step of an SP at an application of the trace, with the errors it raises located there.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <fmt/format.h>

#include <new>

#include "runtime/core/error.hpp"
#include "runtime/core/source_span.hpp"
#include "runtime/sp/sp.hpp"

namespace vnt {

/// Runs one step of an SP (simulate, log_density) at an application: SP errors get the application's span, and
/// an allocation that fails (a huge size the SP did not reject) is the program's error there too (§7.5). Regen and
/// the sections scored from values (chains, sections evaluated in place) locate errors alike.
template <class F>
auto at_application(const Sp& sp, const SourceSpan& span, F&& step) -> decltype(step()) {
  try {
    return step();
  } catch (Error& e) {
    e.attach_span(span);
    throw;
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::kDomain, fmt::format("{}: out of memory", sp.name()), span);
  }
}

}  // namespace vnt
