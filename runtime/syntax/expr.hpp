// Analyzed expressions: special forms resolved, {params} filled, every node with its span.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/core/source_span.hpp"
#include "runtime/value/value.hpp"

namespace vnt {

struct Expr {
  enum class Kind {
    kConst,   // literal, quote, filled {param}: `value`
    kVar,     // `name`
    kLambda,  // (lambda (params...) body): `params`, items[0] = body
    kIf,      // (if c a b): items = {c, a, b}
    kApp,     // (f args...): items[0] = operator, items[1..] = operands
  };
  Kind kind = Kind::kConst;
  Value value;
  std::string name;
  std::vector<std::string> params;
  std::vector<std::unique_ptr<Expr>> items;
  SourceSpan span;

  /// The source text of this expression (used as a column name by collect).
  std::string text() const;
};

using ExprPtr = std::unique_ptr<Expr>;

}  // namespace vnt
