// Vectors of reals (Eigen::VectorXd): construction, indexing, size, dot products, sums and concatenation.
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <cmath>

#include "runtime/core/utf8.hpp"
#include "runtime/sp/registry.hpp"
#include "stdlib/support/deterministic.hpp"

namespace vnt::stdlib {
namespace {

Value build_vector(const Call& c) {
  Eigen::VectorXd v(static_cast<Eigen::Index>(c.size()));
  for (size_t i = 0; i < c.size(); ++i) v[static_cast<Eigen::Index>(i)] = c.number(i);
  return make_vector(std::move(v));
}

// Indices are 0-based. A matrix is indexed by row, giving the row as a vector.
Value lookup(const Call& c) {
  const Value& coll = c[0];
  if (is_vector(coll)) {
    const Eigen::VectorXd& v = c.vector(0);
    int64_t i = c.index(1);
    if (i >= v.size()) c.fail_range(i, fmt::format("a vector of size {}", v.size()));
    return v[i];
  }
  if (is_list(coll)) {
    const List& l = c.list(0);
    int64_t i = c.index(1);
    if (static_cast<uint64_t>(i) >= l.size()) c.fail_range(i, fmt::format("a list of size {}", l.size()));
    return l.items()[static_cast<size_t>(i)];
  }
  if (is_matrix(coll)) {
    const Eigen::MatrixXd& m = c.matrix(0);
    int64_t i = c.index(1);
    if (i >= m.rows()) c.fail_range(i, fmt::format("a matrix with {} rows", m.rows()));
    return make_vector(m.row(i).transpose());
  }
  c.fail_type(0, "a vector, list or matrix");
}

Value size(const Call& c) {
  const Value& v = c[0];
  if (auto* p = std::get_if<VectorPtr>(&v)) return static_cast<double>((*p)->size());
  if (auto* l = std::get_if<ListPtr>(&v)) return static_cast<double>((*l)->size());
  if (auto* s = std::get_if<StringPtr>(&v)) return static_cast<double>(utf8_length(**s));  // characters, not bytes
  c.fail_type(0, "a vector, list or string");
}

Value dot(const Call& c) {
  const Eigen::VectorXd& a = c.vector(0);
  const Eigen::VectorXd& b = c.vector(1);
  if (a.size() != b.size()) c.fail_sizes(1, b.size(), 0, a.size());
  return a.dot(b);
}

Value mean(const Call& c) {
  const Eigen::VectorXd& v = c.vector(0);
  if (v.size() == 0) c.fail_domain(0, "must be non-empty");
  const double m = v.mean();
  // The sum of finite elements can overflow ((mean (vector 1e308 1e308)) was inf); the sum of x / n cannot.
  if (std::isinf(m) && v.allFinite()) return (v / static_cast<double>(v.size())).sum();
  return m;
}

Value filled(const Call& c, double x) {
  return make_vector(Eigen::VectorXd::Constant(c.size_at_most(0, kMaxElements), x));
}

// n evenly spaced points from a to b inclusive (n = 1 gives [a]); the first point is exactly a, the last exactly b.
// std::lerp, since a + (b - a) * i / (n - 1) overflows to inf or NaN for finite ends such as -1e308 and 1e308.
Value linspace(const Call& c) {
  double a = c.number(0);
  double b = c.number(1);
  Eigen::Index n = c.size_at_most(2, kMaxElements);
  if (n == 1) return make_vector(Eigen::VectorXd::Constant(1, a));
  Eigen::VectorXd v(n);
  // lerp(a, b, t) returns b when a + t (b - a) is NaN and a > b, so an infinite or NaN a took b inside: (linspace
  // nan 1 3) was [nan 1 1] and (linspace inf 1 3) [inf 1 1]. From such an a, the points are lerped from b.
  const bool from_b = !std::isfinite(a);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) / static_cast<double>(n - 1);
    v[i] = from_b ? std::lerp(b, a, 1 - t) : std::lerp(a, b, t);
  }
  if (n > 0) v[0] = a;  // lerp(0, inf, 0) is 0 * inf, NaN
  if (n > 0) v[n - 1] = b;
  return make_vector(std::move(v));
}

// (append v x) adds a number to a vector, or any value to a list.
Value append(const Call& c) {
  if (is_list(c[0])) {
    std::span<const Value> old = c.list(0).items();
    std::vector<Value> items;
    items.reserve(old.size() + 1);
    items.assign(old.begin(), old.end());
    items.push_back(c[1]);
    return make_list(std::move(items));
  }
  if (!is_vector(c[0])) c.fail_type(0, "a vector or list");
  const Eigen::VectorXd& v = c.vector(0);
  double x = c.number(1);  // read before the comma initializer, which must not be left unfinished by a throw
  Eigen::VectorXd out(v.size() + 1);
  out << v, x;
  return make_vector(std::move(out));
}

// Operands of at most kMaxElements each can join into more ((concat z z) of (zeros 1e8)): the result is checked
// before it is allocated, as for the builtins that take a size.
void check_joined_size(const Call& c, int64_t n) {
  if (n > kMaxElements)
    raise(ErrorKind::kDomain, "{}: the result would have {} elements, but must have at most {}", c.name(), n,
          kMaxElements);
}

// Concatenates vectors (or lists, when the first operand is a list); no operands give the empty vector.
Value concat(const Call& c) {
  if (c.size() > 0 && is_list(c[0])) {
    size_t n = 0;
    for (size_t i = 0; i < c.size(); ++i) n += c.list(i).size();
    check_joined_size(c, static_cast<int64_t>(n));
    std::vector<Value> items;
    items.reserve(n);
    for (size_t i = 0; i < c.size(); ++i)
      for (const Value& x : c.list(i).items()) items.push_back(x);
    return make_list(std::move(items));
  }
  Eigen::Index n = 0;
  for (size_t i = 0; i < c.size(); ++i) n += c.vector(i).size();
  check_joined_size(c, n);
  Eigen::VectorXd out(n);
  Eigen::Index at = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    const Eigen::VectorXd& v = c.vector(i);
    out.segment(at, v.size()) = v;
    at += v.size();
  }
  return make_vector(std::move(out));
}

}  // namespace

void register_vector(SpRegistry& r) {
  r.add(make_function_sp("vector", 0, kVariadic, build_vector));
  r.add(make_function_sp("lookup", 2, 2, lookup));
  r.add(make_function_sp("size", 1, 1, size));
  r.add(make_function_sp("dot", 2, 2, dot));
  r.add(make_function_sp("sum", 1, 1, [](const Call& c) { return Value(c.vector(0).sum()); }));
  r.add(make_function_sp("mean", 1, 1, mean));
  r.add(make_function_sp("zeros", 1, 1, [](const Call& c) { return filled(c, 0.0); }));
  r.add(make_function_sp("ones", 1, 1, [](const Call& c) { return filled(c, 1.0); }));
  r.add(make_function_sp("linspace", 3, 3, linspace));
  r.add(make_function_sp("append", 2, 2, append));
  r.add(make_function_sp("concat", 0, kVariadic, concat), {"cat"});
}

}  // namespace vnt::stdlib
