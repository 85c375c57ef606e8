// Private helpers for builtins that act elementwise on numbers, vectors and matrices, broadcasting scalars.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <fmt/format.h>

#include "stdlib/support/deterministic.hpp"

namespace vnt::stdlib {

/// A number, vector or matrix operand (viewed, not copied) and the 1-based position it came from.
struct Operand {
  enum class Shape { kScalar, kVector, kMatrix };
  Shape shape = Shape::kScalar;
  double scalar = 0.0;
  const Eigen::VectorXd* vec = nullptr;
  const Eigen::MatrixXd* mat = nullptr;
  size_t pos = 0;  // 0-based argument index, for messages
};

inline constexpr std::string_view kNumeric = "a number, vector or matrix";

/// Reads operand i of c as a number (booleans count as 0/1), vector or matrix; kType otherwise.
inline Operand read_operand(const Call& c, size_t i) {
  const Value& v = c[i];
  Operand o;
  o.pos = i;
  if (auto* p = std::get_if<VectorPtr>(&v)) {
    o.shape = Operand::Shape::kVector;
    o.vec = p->get();
  } else if (auto* m = std::get_if<MatrixPtr>(&v)) {
    o.shape = Operand::Shape::kMatrix;
    o.mat = m->get();
  } else if (is_number(v) || is_bool(v)) {
    o.scalar = c.number(i);
  } else {
    c.fail_type(i, kNumeric);
  }
  return o;
}

/// The same operand, viewed from a value computed by the builtin (keeps the position of its first array operand).
inline Operand view_result(const Value& v, size_t pos) {
  Operand o;
  o.pos = pos;
  if (auto* p = std::get_if<VectorPtr>(&v)) {
    o.shape = Operand::Shape::kVector;
    o.vec = p->get();
  } else if (auto* m = std::get_if<MatrixPtr>(&v)) {
    o.shape = Operand::Shape::kMatrix;
    o.mat = m->get();
  } else {
    o.scalar = std::get<double>(v);
  }
  return o;
}

/// op(a, b) elementwise. A scalar broadcasts against a vector or matrix; two vectors (or two matrices) must have
/// the same size (shape), else kDomain naming both; a vector with a matrix is a kType error.
template <class Op>
Value broadcast(const Call& c, const Operand& a, const Operand& b, Op op) {
  using S = Operand::Shape;
  auto with_left = [&](double x) { return [x, &op](double y) { return op(x, y); }; };
  auto with_right = [&](double y) { return [y, &op](double x) { return op(x, y); }; };
  if (a.shape == S::kScalar) {
    if (b.shape == S::kScalar) return Value(op(a.scalar, b.scalar));
    if (b.shape == S::kVector) return make_vector(b.vec->unaryExpr(with_left(a.scalar)));
    return make_matrix(b.mat->unaryExpr(with_left(a.scalar)));
  }
  if (b.shape == S::kScalar) {
    if (a.shape == S::kVector) return make_vector(a.vec->unaryExpr(with_right(b.scalar)));
    return make_matrix(a.mat->unaryExpr(with_right(b.scalar)));
  }
  if (a.shape != b.shape) {
    const Value& other = c[b.pos];
    raise(ErrorKind::kType, "{}: argument {} must be {} (to match argument {}), got {}", c.name(), b.pos + 1,
          a.shape == S::kVector ? "a vector" : "a matrix", a.pos + 1, kind_name(other));
  }
  if (a.shape == S::kVector) {
    if (a.vec->size() != b.vec->size()) c.fail_sizes(b.pos, b.vec->size(), a.pos, a.vec->size());
    return make_vector(a.vec->binaryExpr(*b.vec, op));
  }
  if (a.mat->rows() != b.mat->rows() || a.mat->cols() != b.mat->cols())
    raise(ErrorKind::kDomain, "{}: argument {} has shape {}x{}, but argument {} has shape {}x{}", c.name(), b.pos + 1,
          b.mat->rows(), b.mat->cols(), a.pos + 1, a.mat->rows(), a.mat->cols());
  return make_matrix(a.mat->binaryExpr(*b.mat, op));
}

/// Left fold of op over all operands of c, elementwise with broadcasting; `empty` is the result for no operands.
template <class Op>
Value fold_elementwise(const Call& c, double empty, Op op) {
  if (c.size() == 0) return Value(empty);
  Value acc = c[0];
  Operand a = read_operand(c, 0);
  if (a.shape == Operand::Shape::kScalar) acc = Value(a.scalar);  // booleans become numbers
  for (size_t i = 1; i < c.size(); ++i) {
    Operand b = read_operand(c, i);
    size_t pos = a.shape == Operand::Shape::kScalar ? b.pos : a.pos;
    acc = broadcast(c, a, b, op);
    a = view_result(acc, pos);
  }
  return acc;
}

/// f applied to operand i (a number, vector or matrix), keeping its shape. `ok(x)` is checked for every input
/// element; a failure is kDomain "f: argument 1 is -1, but <requirement>" (or "... at index k ..." for arrays).
template <class F, class Ok>
Value map_checked(const Call& c, size_t i, F f, Ok ok, std::string_view requirement) {
  Operand o = read_operand(c, i);
  switch (o.shape) {
    case Operand::Shape::kScalar:
      if (!ok(o.scalar)) c.fail_domain(i, requirement);
      return Value(f(o.scalar));
    case Operand::Shape::kVector:
      for (Eigen::Index k = 0; k < o.vec->size(); ++k)
        if (!ok((*o.vec)[k])) c.fail_element(i, fmt::format("{}", k), (*o.vec)[k], requirement);
      return make_vector(o.vec->unaryExpr(f));
    case Operand::Shape::kMatrix:
      for (Eigen::Index col = 0; col < o.mat->cols(); ++col)
        for (Eigen::Index row = 0; row < o.mat->rows(); ++row)
          if (!ok((*o.mat)(row, col)))
            c.fail_element(i, fmt::format("({}, {})", row, col), (*o.mat)(row, col), requirement);
      return make_matrix(o.mat->unaryExpr(f));
  }
  return Value(0.0);
}

/// f applied elementwise to operand i with no domain restriction.
template <class F>
Value map_elementwise(const Call& c, size_t i, F f) {
  return map_checked(c, i, f, [](double) { return true; }, {});
}

}  // namespace vnt::stdlib
