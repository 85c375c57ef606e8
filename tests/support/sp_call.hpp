// Test helpers: apply a builtin SP by name to values, build values tersely, and capture the error it throws.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <doctest/doctest.h>

#include <initializer_list>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/sp/registry.hpp"

namespace vnt::stdlib {
void register_arithmetic(SpRegistry& r);
void register_comparison(SpRegistry& r);
void register_constants(SpRegistry& r);
void register_elementary(SpRegistry& r);
void register_linear_logistic(SpRegistry& r);
void register_list(SpRegistry& r);
void register_logic(SpRegistry& r);
void register_matrix(SpRegistry& r);
void register_vector(SpRegistry& r);
}  // namespace vnt::stdlib

namespace vnt::test {

/// The deterministic builtins only, so these tests do not depend on the distributions being registered.
inline const SpRegistry& deterministic_builtins() {
  static const SpRegistry registry = [] {
    SpRegistry r;
    stdlib::register_arithmetic(r);
    stdlib::register_comparison(r);
    stdlib::register_constants(r);
    stdlib::register_elementary(r);
    stdlib::register_linear_logistic(r);
    stdlib::register_list(r);
    stdlib::register_logic(r);
    stdlib::register_matrix(r);
    stdlib::register_vector(r);
    return r;
  }();
  return registry;
}

/// Applies the SP registered as `name` to `args` (simulate, fixed seed). Throws vnt::Error as the SP does.
inline Value call(const SpRegistry& r, std::string_view name, std::vector<Value> args) {
  const Value* bound = r.find(name);
  REQUIRE_MESSAGE(bound != nullptr, "no builtin named ", std::string(name));
  REQUIRE(is_procedure(*bound));
  const auto* proc = dynamic_cast<const SpProcedure*>(std::get<ProcPtr>(*bound).get());
  REQUIRE(proc != nullptr);
  std::vector<const Value*> ptrs;
  for (const Value& v : args) ptrs.push_back(&v);
  Rng rng(1);
  return proc->sp().simulate(Args(ptrs, proc->aux()), rng);
}

inline Value call(std::string_view name, std::vector<Value> args) {
  return call(deterministic_builtins(), name, std::move(args));
}

/// What a failed call threw. SP errors never carry a source position (the trace attaches it).
struct Failure {
  ErrorKind kind;
  std::string message;
  bool operator==(const Failure&) const = default;
};

inline std::ostream& operator<<(std::ostream& os, const Failure& f) {
  return os << error_kind_name(f.kind) << ": " << f.message;
}

inline Failure failure(std::string_view name, std::vector<Value> args) {
  try {
    Value v = call(name, std::move(args));
    return {ErrorKind::kInternal, "<no error; returned " + to_string(v) + ">"};
  } catch (const Error& e) {
    CHECK_FALSE(e.has_span());
    return {e.kind(), e.message()};
  }
}

// Terse value constructors.
inline Value vec(std::initializer_list<double> xs) {
  Eigen::VectorXd v(static_cast<Eigen::Index>(xs.size()));
  Eigen::Index i = 0;
  for (double x : xs) v[i++] = x;
  return make_vector(std::move(v));
}

inline Value mat(std::initializer_list<std::initializer_list<double>> rows) {
  Eigen::Index cols = rows.size() == 0 ? 0 : static_cast<Eigen::Index>(rows.begin()->size());
  Eigen::MatrixXd m(static_cast<Eigen::Index>(rows.size()), cols);
  Eigen::Index r = 0;
  for (const auto& row : rows) {
    Eigen::Index c = 0;
    for (double x : row) m(r, c++) = x;
    ++r;
  }
  return make_matrix(std::move(m));
}

inline Value lst(std::vector<Value> items) { return make_list(std::move(items)); }
inline Value sym(std::string_view name) { return make_symbol(name); }
inline Value str(std::string s) { return make_string(std::move(s)); }

/// The printed form, for readable structural checks: show(call("+", {vec({1, 2}), 1.0})) == "[2 3]".
inline std::string show(const Value& v) { return to_string(v); }

/// The number a call returned (fails the test if it returned anything else).
inline double num(const Value& v) {
  REQUIRE_MESSAGE(is_number(v), "expected a number, got ", to_string(v));
  return std::get<double>(v);
}

/// The boolean a call returned (fails the test if it returned anything else).
inline bool boolean(const Value& v) {
  REQUIRE_MESSAGE(is_bool(v), "expected a boolean, got ", to_string(v));
  return std::get<bool>(v);
}

}  // namespace vnt::test
