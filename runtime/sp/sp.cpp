// Shared argument checks for SPs.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/sp/sp.hpp"

#include "runtime/core/error.hpp"

namespace vnt {

void throw_arity(std::string_view name, size_t n, size_t lo, size_t hi) {
  auto plural = [](size_t k) { return k == 1 ? "argument" : "arguments"; };
  if (lo == hi) raise(ErrorKind::kArity, "{}: expected {} {}, got {}", name, lo, plural(lo), n);
  if (hi == static_cast<size_t>(-1))
    raise(ErrorKind::kArity, "{}: expected at least {} {}, got {}", name, lo, plural(lo), n);
  raise(ErrorKind::kArity, "{}: expected {} to {} arguments, got {}", name, lo, hi, n);
}

}  // namespace vnt
