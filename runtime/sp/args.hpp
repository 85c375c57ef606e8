// The view of an application's operands that an SP sees: values only, never trace nodes.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <span>

#include "runtime/value/value.hpp"

namespace vnt {

class SpAux;

/// What the caller knows about how operands were computed, beyond their values. Only one fact so far: the
/// log-odds z of an operand computed as logistic(z), which a double rounds to exactly 0 or 1 once |z| > ~37
/// (see Sp::log_odds).
class ArgOrigins {
 public:
  virtual std::optional<double> log_odds(size_t i) const = 0;

 protected:
  ~ArgOrigins() = default;
};

class Args {
 public:
  Args(std::span<const Value* const> values, SpAux* aux = nullptr, const ArgOrigins* origins = nullptr)
      : values_(values), aux_(aux), origins_(origins) {}

  size_t size() const { return values_.size(); }
  const Value& operator[](size_t i) const { return *values_[i]; }
  /// Auxiliary state of the made SP being applied (nullptr for plain primitives).
  SpAux* aux() const { return aux_; }
  /// The log-odds of operand i if it is a probability computed from them, else nullopt. Costs a re-evaluation of
  /// the operand's application: for the tails, where the value alone has lost the answer.
  std::optional<double> log_odds(size_t i) const { return origins_ ? origins_->log_odds(i) : std::nullopt; }

 private:
  std::span<const Value* const> values_;
  SpAux* aux_;
  const ArgOrigins* origins_;
};

}  // namespace vnt
