// Private helpers for deterministic builtins: an Sp wrapping a function, and argument access with uniform messages.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "runtime/core/error.hpp"
#include "runtime/sp/sp.hpp"
#include "runtime/value/coerce.hpp"

namespace vnt::stdlib {

/// Upper arity bound for n-ary builtins.
inline constexpr size_t kVariadic = static_cast<size_t>(-1);

/// The most elements a builtin creates from a size argument (800 MB of doubles). A larger size is the program's
/// error: the allocation could fail, or succeed lazily and get the process killed when the memory is touched.
inline constexpr int64_t kMaxElements = 100'000'000;

/// One application of a builtin: its name and operands. Indices are 0-based here and 1-based in messages.
class Call {
 public:
  Call(std::string_view name, const Args& args) : name_(name), args_(args) {}

  std::string_view name() const { return name_; }
  size_t size() const { return args_.size(); }
  const Value& operator[](size_t i) const { return args_[i]; }
  ArgRef ref(size_t i) const { return ArgRef{name_, i + 1, {}}; }

  double number(size_t i) const { return as_double(args_[i], ref(i)); }
  const Eigen::VectorXd& vector(size_t i) const { return as_vector(args_[i], ref(i)); }
  const Eigen::MatrixXd& matrix(size_t i) const { return as_matrix(args_[i], ref(i)); }
  const List& list(size_t i) const { return as_list(args_[i], ref(i)); }
  /// A non-negative integer (count or index); kDomain otherwise.
  int64_t index(size_t i) const { return as_index(args_[i], ref(i)); }
  /// A size: a non-negative integer at most `max`; kDomain "f: argument 1 is 1e+12, but must be at most 100000000".
  int64_t size_at_most(size_t i, int64_t max) const {
    int64_t n = index(i);
    if (n > max) fail_domain(i, fmt::format("must be at most {}", max));
    return n;
  }

  /// kType: "f: argument 2 must be <expected>, got a symbol".
  [[noreturn]] void fail_type(size_t i, std::string_view expected) const { throw_arg_type(ref(i), expected, args_[i]); }
  /// kDomain: "f: argument 1 is -1, but <requirement>".
  [[noreturn]] void fail_domain(size_t i, std::string_view requirement) const {
    raise(ErrorKind::kDomain, "{}: argument {} is {}, but {}", name_, i + 1, to_string(args_[i]), requirement);
  }
  /// kDomain for one element of a vector or matrix argument: "f: argument 1 at index 2 is -1, but <requirement>"
  /// (`at` is "2" for a vector, "(1, 0)" for a matrix; 0-based like lookup).
  [[noreturn]] void fail_element(size_t i, std::string_view at, double x, std::string_view requirement) const {
    raise(ErrorKind::kDomain, "{}: argument {} at index {} is {}, but {}", name_, i + 1, at, to_string(Value(x)),
          requirement);
  }
  /// kDomain for operands whose sizes must agree: "f: argument 2 has size 3, but argument 1 has size 2".
  [[noreturn]] void fail_sizes(size_t i, Eigen::Index n, size_t j, Eigen::Index m) const {
    raise(ErrorKind::kDomain, "{}: argument {} has size {}, but argument {} has size {}", name_, i + 1, n, j + 1, m);
  }
  /// kDomain for an index past the end: "lookup: index 3 is out of range for a vector of size 2"
  /// (`container` is e.g. "a vector of size 2" or "a matrix with 2 rows").
  [[noreturn]] void fail_range(int64_t index, std::string_view container) const {
    raise(ErrorKind::kDomain, "{}: index {} is out of range for {}", name_, index, container);
  }

 private:
  std::string_view name_;
  const Args& args_;
};

/// A deterministic SP computed by a function of its operands (rng unused).
class FunctionSp final : public Sp {
 public:
  using Body = std::function<Value(const Call&)>;

  FunctionSp(std::string name, size_t lo, size_t hi, Body body)
      : name_(std::move(name)), lo_(lo), hi_(hi), body_(std::move(body)) {}

  std::string_view name() const override { return name_; }
  Value simulate(const Args& args, Rng& /*rng*/) const override {
    check_arity(name_, args, lo_, hi_);
    return body_(Call(name_, args));
  }

 private:
  std::string name_;
  size_t lo_, hi_;
  Body body_;
};

/// A builtin taking lo..hi operands (hi = kVariadic for n-ary). Arity errors are "f: expected 2 arguments, got 3".
inline std::shared_ptr<const Sp> make_function_sp(std::string name, size_t lo, size_t hi, FunctionSp::Body body) {
  return std::make_shared<FunctionSp>(std::move(name), lo, hi, std::move(body));
}

}  // namespace vnt::stdlib
