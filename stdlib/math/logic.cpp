// not, and, or, xor as strict functions over truthiness (false, nil and 0 are false); results are booleans.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/sp/registry.hpp"
#include "stdlib/support/deterministic.hpp"

namespace vnt::stdlib {
namespace {

// Every operand is evaluated before the call (these are procedures, not special forms), so there is no
// short-circuit; (and) is true and (or) is false, the identities of the folds.
Value all_true(const Call& c) {
  for (size_t i = 0; i < c.size(); ++i)
    if (!truthy(c[i])) return false;
  return true;
}

Value any_true(const Call& c) {
  for (size_t i = 0; i < c.size(); ++i)
    if (truthy(c[i])) return true;
  return false;
}

// n-ary xor is parity: true when an odd number of operands are true.
Value odd_true(const Call& c) {
  bool odd = false;
  for (size_t i = 0; i < c.size(); ++i) odd ^= truthy(c[i]);
  return odd;
}

}  // namespace

void register_logic(SpRegistry& r) {
  r.add(make_function_sp("not", 1, 1, [](const Call& c) { return Value(!truthy(c[0])); }));
  r.add(make_function_sp("and", 0, kVariadic, all_true));
  r.add(make_function_sp("or", 0, kVariadic, any_true));
  r.add(make_function_sp("xor", 2, kVariadic, odd_true));
}

}  // namespace vnt::stdlib
