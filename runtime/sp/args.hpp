// The view of an application's operands that an SP sees: values only, never trace nodes.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <span>

#include "runtime/value/value.hpp"

namespace vnt {

class SpAux;

class Args {
 public:
  Args(std::span<const Value* const> values, SpAux* aux = nullptr) : values_(values), aux_(aux) {}

  size_t size() const { return values_.size(); }
  const Value& operator[](size_t i) const { return *values_[i]; }
  /// Auxiliary state of the made SP being applied (nullptr for plain primitives).
  SpAux* aux() const { return aux_; }

 private:
  std::span<const Value* const> values_;
  SpAux* aux_;
};

}  // namespace vnt
