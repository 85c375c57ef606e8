// = and != on any values (structural equality), and the numeric orderings < > <= >=.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/sp/registry.hpp"
#include "stdlib/support/deterministic.hpp"

namespace vnt::stdlib {
namespace {

// Orderings compare numbers only (booleans count as 0/1, as everywhere numbers are read); any NaN operand gives
// false, as in IEEE 754.
template <class Cmp>
std::shared_ptr<const Sp> ordering(std::string name, Cmp cmp) {
  return make_function_sp(std::move(name), 2, 2, [cmp](const Call& c) { return Value(cmp(c.number(0), c.number(1))); });
}

}  // namespace

void register_comparison(SpRegistry& r) {
  // Structural: numbers by ==, vectors/lists elementwise, procedures by identity; true and 1 are not equal.
  r.add(make_function_sp("=", 2, 2, [](const Call& c) { return Value(values_equal(c[0], c[1])); }));
  r.add(make_function_sp("!=", 2, 2, [](const Call& c) { return Value(!values_equal(c[0], c[1])); }));
  r.add(ordering("<", [](double x, double y) { return x < y; }));
  r.add(ordering(">", [](double x, double y) { return x > y; }));
  r.add(ordering("<=", [](double x, double y) { return x <= y; }));
  r.add(ordering(">=", [](double x, double y) { return x >= y; }));
}

}  // namespace vnt::stdlib
