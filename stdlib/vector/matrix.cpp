// Matrices of reals (Eigen::MatrixXd): construction from rows, identity and diagonal, transpose, products, indexing.
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <algorithm>

#include "runtime/core/interrupt.hpp"
#include "runtime/sp/registry.hpp"
#include "stdlib/support/deterministic.hpp"

namespace vnt::stdlib {
namespace {

// (matrix (vector 1 2) (vector 3 4)): each operand is a row; all rows must have the size of the first.
Value from_rows(const Call& c) {
  const Eigen::Index cols = c.vector(0).size();
  // Rows of at most kMaxElements each can make a huge matrix: checked before Eigen allocates it.
  if (static_cast<double>(c.size()) * static_cast<double>(cols) > static_cast<double>(kMaxElements))
    raise(ErrorKind::kDomain, "matrix: the matrix would be {}x{}, but a matrix must have at most {} elements",
          c.size(), cols, kMaxElements);
  Eigen::MatrixXd m(static_cast<Eigen::Index>(c.size()), cols);
  for (size_t i = 0; i < c.size(); ++i) {
    const Eigen::VectorXd& row = c.vector(i);
    if (row.size() != cols) c.fail_sizes(i, row.size(), 0, cols);
    m.row(static_cast<Eigen::Index>(i)) = row.transpose();
  }
  return make_matrix(std::move(m));
}

// n × n elements: n is at most 10000 (kMaxElements in all).
Value identity(const Call& c) {
  constexpr int64_t kMaxSide = 10'000;
  static_assert(kMaxSide * kMaxSide <= kMaxElements);
  Eigen::Index n = c.size_at_most(0, kMaxSide);
  return make_matrix(Eigen::MatrixXd::Identity(n, n));
}

// n × n elements, so n is at most 10000 as for id_matrix: (diag_matrix (zeros 100000)) would take 80 GB.
Value diagonal(const Call& c) {
  const Eigen::VectorXd& v = c.vector(0);
  if (v.size() > 10'000)
    raise(ErrorKind::kDomain, "diag_matrix: argument 1 has {} elements, but must have at most 10000", v.size());
  return make_matrix(v.asDiagonal());
}

// A product of more multiply-adds than this (about 30 ms) is computed in blocks of rows, polling for an interrupt
// between them: 10000 x 10000 matrices take 1e12, too long to be unstoppable.
constexpr double kDirectWork = double{1 << 27};
// Thinner blocks cost Eigen's blocked product speed: 64 rows took 12% longer than one product at 1000-3000, 128
// about 4% (noise was 5%). A block of a 10000 x 10000 product is then 1.3e10 multiply-adds, a few seconds.
constexpr Eigen::Index kMinBlockRows = 128;

Eigen::MatrixXd product(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  const double row_work = static_cast<double>(a.cols()) * static_cast<double>(b.cols());
  if (static_cast<double>(a.rows()) * row_work <= kDirectWork) return a * b;
  const Eigen::Index rows = std::max(kMinBlockRows, static_cast<Eigen::Index>(kDirectWork / row_work));
  Eigen::MatrixXd out(a.rows(), b.cols());
  for (Eigen::Index i = 0; i < a.rows(); i += rows) {
    poll_interrupt();
    const Eigen::Index n = std::min(rows, a.rows() - i);
    out.middleRows(i, n).noalias() = a.middleRows(i, n) * b;
  }
  return out;
}

// matrix × matrix gives a matrix, matrix × vector a vector; the inner dimensions must agree.
Value matrix_mul(const Call& c) {
  const Eigen::MatrixXd& a = c.matrix(0);
  if (is_vector(c[1])) {
    const Eigen::VectorXd& x = c.vector(1);
    if (x.size() != a.cols())
      raise(ErrorKind::kDomain, "matrix_mul: argument 2 has size {}, but argument 1 has {} columns", x.size(),
            a.cols());
    return make_vector(a * x);
  }
  if (!is_matrix(c[1])) c.fail_type(1, "a matrix or vector");
  const Eigen::MatrixXd& b = c.matrix(1);
  if (b.rows() != a.cols())
    raise(ErrorKind::kDomain, "matrix_mul: argument 2 has {} rows, but argument 1 has {} columns", b.rows(), a.cols());
  // An outer product of two long vectors is huge: checked before Eigen allocates it.
  if (static_cast<double>(a.rows()) * static_cast<double>(b.cols()) > static_cast<double>(kMaxElements))
    raise(ErrorKind::kDomain, "matrix_mul: the product would be {}x{}, but a matrix must have at most {} elements",
          a.rows(), b.cols(), kMaxElements);
  return make_matrix(product(a, b));
}

// Row and column indices are 0-based, like lookup.
Eigen::Index row_index(const Call& c, size_t i, const Eigen::MatrixXd& m) {
  int64_t r = c.index(i);
  if (r >= m.rows()) c.fail_range(r, fmt::format("a matrix with {} rows", m.rows()));
  return r;
}

Eigen::Index col_index(const Call& c, size_t i, const Eigen::MatrixXd& m) {
  int64_t k = c.index(i);
  if (k >= m.cols()) c.fail_range(k, fmt::format("a matrix with {} columns", m.cols()));
  return k;
}

Value row(const Call& c) {
  const Eigen::MatrixXd& m = c.matrix(0);
  return make_vector(m.row(row_index(c, 1, m)).transpose());
}

Value col(const Call& c) {
  const Eigen::MatrixXd& m = c.matrix(0);
  return make_vector(m.col(col_index(c, 1, m)));
}

Value entry(const Call& c) {
  const Eigen::MatrixXd& m = c.matrix(0);
  Eigen::Index i = row_index(c, 1, m);
  return m(i, col_index(c, 2, m));
}

}  // namespace

void register_matrix(SpRegistry& r) {
  r.add(make_function_sp("matrix", 1, kVariadic, from_rows));
  r.add(make_function_sp("id_matrix", 1, 1, identity));
  r.add(make_function_sp("diag_matrix", 1, 1, diagonal));
  r.add(make_function_sp("transpose", 1, 1, [](const Call& c) { return make_matrix(c.matrix(0).transpose()); }));
  r.add(make_function_sp("matrix_mul", 2, 2, matrix_mul));
  r.add(make_function_sp("row", 2, 2, row));
  r.add(make_function_sp("col", 2, 2, col));
  r.add(make_function_sp("mat_lookup", 3, 3, entry));
}

}  // namespace vnt::stdlib
