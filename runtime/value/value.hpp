// Value: the small variant every node holds. Scalars inline; aggregates behind shared_ptr<const>.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <Eigen/Dense>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace vnt {

struct Nil {
  bool operator==(const Nil&) const = default;
};

/// A quoted name ('w). Compared by text.
struct Symbol {
  std::shared_ptr<const std::string> name;
  std::string_view str() const { return *name; }
};

/// A procedure value (primitive SP, made SP, compound procedure, memoized procedure).
/// Concrete kinds live in the sp and trace layers; values compare procedures by identity.
class Procedure {
 public:
  enum class Kind : uint8_t { kPrimitive, kCompound, kMem, kBranch };
  explicit Procedure(Kind kind) : kind_(kind) {}
  virtual ~Procedure() = default;
  Procedure(const Procedure&) = delete;
  Procedure& operator=(const Procedure&) = delete;

  Kind kind() const { return kind_; }
  virtual std::string_view name() const = 0;

 private:
  Kind kind_;
};

struct List;
using StringPtr = std::shared_ptr<const std::string>;
using ListPtr = std::shared_ptr<const List>;
using VectorPtr = std::shared_ptr<const Eigen::VectorXd>;
using MatrixPtr = std::shared_ptr<const Eigen::MatrixXd>;
using ProcPtr = std::shared_ptr<Procedure>;

/// Numbers are doubles (integer-valued results such as counts and indices are exact up to 2^53).
using Value = std::variant<Nil, bool, double, Symbol, StringPtr, ListPtr, VectorPtr, MatrixPtr, ProcPtr>;

struct List {
  std::vector<Value> items;
};

// Constructors.
inline Value make_nil() { return Nil{}; }
Value make_symbol(std::string_view name);
Value make_string(std::string s);
Value make_list(std::vector<Value> items);
Value make_vector(Eigen::VectorXd v);
Value make_matrix(Eigen::MatrixXd m);

// Kind tests.
inline bool is_nil(const Value& v) { return std::holds_alternative<Nil>(v); }
inline bool is_bool(const Value& v) { return std::holds_alternative<bool>(v); }
inline bool is_number(const Value& v) { return std::holds_alternative<double>(v); }
inline bool is_symbol(const Value& v) { return std::holds_alternative<Symbol>(v); }
inline bool is_string(const Value& v) { return std::holds_alternative<StringPtr>(v); }
inline bool is_list(const Value& v) { return std::holds_alternative<ListPtr>(v); }
inline bool is_vector(const Value& v) { return std::holds_alternative<VectorPtr>(v); }
inline bool is_matrix(const Value& v) { return std::holds_alternative<MatrixPtr>(v); }
inline bool is_procedure(const Value& v) { return std::holds_alternative<ProcPtr>(v); }

/// Human name of a value's kind for messages: "a number", "a vector", ...
std::string_view kind_name(const Value& v);

/// Printed form: numbers shortest round-trip (integers without ".0"), vectors "[1 2]", lists "(1 2)".
std::string to_string(const Value& v);

/// Structural equality (procedures by identity, numbers by ==, so NaN differs from itself).
bool values_equal(const Value& a, const Value& b);

/// Equality of values used as keys (mem arguments, scope blocks): as values_equal, but NaN equals NaN, so that
/// a key always finds the entry it made.
bool keys_equal(const Value& a, const Value& b);

/// Hash consistent with keys_equal (and so with values_equal).
size_t value_hash(const Value& v);

/// Truthiness for `if`: false, nil and 0 are false; everything else true.
bool truthy(const Value& v);

struct KeyHash {
  size_t operator()(const Value& v) const { return value_hash(v); }
};
struct KeyEqual {
  bool operator()(const Value& a, const Value& b) const { return keys_equal(a, b); }
};

}  // namespace vnt
