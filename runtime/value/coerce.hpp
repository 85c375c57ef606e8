// Checked access to values with uniform messages: "normal: argument 2 (sigma) must be a number, got a vector".
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

#include "runtime/core/error.hpp"
#include "runtime/value/value.hpp"

namespace vnt {

/// Names an argument for messages: the procedure, the 1-based position and a readable parameter name.
struct ArgRef {
  std::string_view proc;
  size_t position;          // 1-based
  std::string_view param;   // may be empty
};

[[noreturn]] void throw_arg_type(const ArgRef& where, std::string_view expected, const Value& got);

inline double as_double(const Value& v, const ArgRef& where) {
  if (auto* d = std::get_if<double>(&v)) return *d;
  if (auto* b = std::get_if<bool>(&v)) return *b ? 1.0 : 0.0;
  throw_arg_type(where, "a number", v);
}
inline const Eigen::VectorXd& as_vector(const Value& v, const ArgRef& where) {
  if (auto* p = std::get_if<VectorPtr>(&v)) return **p;
  throw_arg_type(where, "a vector", v);
}
const Eigen::MatrixXd& as_matrix(const Value& v, const ArgRef& where);
const List& as_list(const Value& v, const ArgRef& where);
bool as_bool(const Value& v, const ArgRef& where);
/// Throws the kDomain error of as_index for a number v that is not a non-negative integer of at most 9e15.
[[noreturn]] void throw_not_index(const Value& v, const ArgRef& where);
/// A number that is a non-negative integer (exact), e.g. an index or a count. Inline: `lookup` reads one.
inline int64_t as_index(const Value& v, const ArgRef& where) {
  const double d = as_double(v, where);
  // On [0, 9e15] truncating is flooring, and exact (NaN fails the first test).
  if (d >= 0 && d <= 9.0e15 && static_cast<double>(static_cast<int64_t>(d)) == d) return static_cast<int64_t>(d);
  throw_not_index(v, where);
}

}  // namespace vnt
