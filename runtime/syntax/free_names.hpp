// The names an expression reads from outside itself: what `forget` must keep bound while the expression lives.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <vector>

#include "runtime/syntax/expr.hpp"

namespace vnt {

/// The first read (a kVar) of each name in `e` that no lambda (or let) within `e` binds, in source order. Reads
/// that evaluation has not reached count too: a branch not taken, the body of a procedure not yet called.
std::vector<const Expr*> free_names(const Expr& e);

}  // namespace vnt
