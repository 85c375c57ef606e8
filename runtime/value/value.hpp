// Value: the small variant every node holds. Scalars inline; aggregates behind shared_ptr<const>.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <Eigen/Dense>

#include <cstdint>
#include <memory>
#include <span>
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

/// An immutable list: a view of the back part of a fixed buffer that other lists may share, so that `rest` and
/// (amortised) `pair` are O(1) and recursion over a list copies nothing. Views never see a slot change: a slot is
/// written once, before any view covers it, and a buffer is never reallocated in place (runtime/value/list.cpp).
class List {
 public:
  List() = default;  // the empty list, which holds no buffer
  explicit List(std::vector<Value> items);

  std::span<const Value> items() const { return {first_, size_}; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  /// (pair x l): shares this list's buffer when this is the front-most view of it and there is room before it,
  /// else copies the items into a new buffer with room for about as many more.
  List prepend(Value x) const;
  /// (rest l): the same buffer, one item on. The list must not be empty.
  List rest() const;

  /// Buffer slots allocated and not yet freed, over all lists of the process (for tests and benchmarks).
  static size_t live_slots();

 private:
  struct Storage;
  List(std::shared_ptr<Storage> s, const Value* first, size_t size) : s_(std::move(s)), first_(first), size_(size) {}

  std::shared_ptr<Storage> s_;
  const Value* first_ = nullptr;  // items() is [first_, first_ + size_), the back of s_'s buffer
  size_t size_ = 0;
};

// Constructors.
inline Value make_nil() { return Nil{}; }
Value make_symbol(std::string_view name);
Value make_string(std::string s);
Value make_list(std::vector<Value> items);
Value list_value(List l);
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
