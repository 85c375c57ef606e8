// Registration of the builtins implemented by the trace layer (mem, scope_include).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "runtime/sp/registry.hpp"

namespace vnt {

void register_trace_builtins(SpRegistry& r);

/// The name of a scope given as a symbol ('w) or string.
std::string scope_name(const Value& v);

}  // namespace vnt
