// + - * / on numbers, vectors and matrices, elementwise with broadcasting of scalars.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/sp/registry.hpp"
#include "stdlib/support/elementwise.hpp"

namespace vnt::stdlib {
namespace {

// Plain numbers are by far the common case, so they skip the operand machinery.
bool all_numbers(const Call& c) {
  for (size_t i = 0; i < c.size(); ++i)
    if (!is_number(c[i])) return false;
  return true;
}

Value add(const Call& c) {
  if (all_numbers(c)) {
    double s = 0.0;
    for (size_t i = 0; i < c.size(); ++i) s += std::get<double>(c[i]);
    return s;
  }
  return fold_elementwise(c, 0.0, [](double x, double y) { return x + y; });
}

// `*` is elementwise on two vectors or two matrices (Hadamard); matrix products are `matrix_mul`.
Value multiply(const Call& c) {
  if (all_numbers(c)) {
    double p = 1.0;
    for (size_t i = 0; i < c.size(); ++i) p *= std::get<double>(c[i]);
    return p;
  }
  return fold_elementwise(c, 1.0, [](double x, double y) { return x * y; });
}

Value subtract(const Call& c) {
  if (c.size() == 1) return map_elementwise(c, 0, [](double x) { return -x; });
  return broadcast(c, read_operand(c, 0), read_operand(c, 1), [](double x, double y) { return x - y; });
}

// Division follows IEEE 754 rather than raising: (/ 1 0) is inf, (/ -1 0) is -inf and (/ 0 0) is nan, exactly
// as for the elements of a vector, so a model that divides by a sampled zero sees the same value either way.
Value divide(const Call& c) {
  return broadcast(c, read_operand(c, 0), read_operand(c, 1), [](double x, double y) { return x / y; });
}

}  // namespace

void register_arithmetic(SpRegistry& r) {
  r.add(make_function_sp("+", 0, kVariadic, add));
  r.add(make_function_sp("*", 0, kVariadic, multiply));
  r.add(make_function_sp("-", 1, 2, subtract));
  r.add(make_function_sp("/", 2, 2, divide));
}

}  // namespace vnt::stdlib
