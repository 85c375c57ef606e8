// Proper lists of arbitrary values: list, pair/cons, first, second, rest, is_empty.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/sp/registry.hpp"
#include "stdlib/support/deterministic.hpp"

namespace vnt::stdlib {
namespace {

// The list operand i, which must hold at least n items ("first: argument 1 is (), but must be a non-empty list").
const List& list_of_at_least(const Call& c, size_t i, size_t n) {
  const List& l = c.list(i);
  if (l.size() < n) c.fail_domain(i, n == 1 ? "must be a non-empty list" : "must have at least 2 items");
  return l;
}

Value make(const Call& c) {
  std::vector<Value> items;
  items.reserve(c.size());
  for (size_t i = 0; i < c.size(); ++i) items.push_back(c[i]);
  return make_list(std::move(items));
}

// O(1) amortised: the new list shares the tail's buffer when it can (runtime/value/list.cpp). There are no
// improper pairs: the second operand must be a list.
Value pair(const Call& c) { return list_value(c.list(1).prepend(c[0])); }

// O(1): a view of the same buffer.
Value rest(const Call& c) { return list_value(list_of_at_least(c, 0, 1).rest()); }

// Empty lists and empty vectors.
Value is_empty(const Call& c) {
  if (is_vector(c[0])) return Value(c.vector(0).size() == 0);
  if (!is_list(c[0])) c.fail_type(0, "a list or vector");
  return Value(c.list(0).empty());
}

}  // namespace

void register_list(SpRegistry& r) {
  r.add(make_function_sp("list", 0, kVariadic, make));
  r.add(make_function_sp("pair", 2, 2, pair), {"cons"});
  r.add(make_function_sp("first", 1, 1, [](const Call& c) { return list_of_at_least(c, 0, 1).items()[0]; }));
  r.add(make_function_sp("second", 1, 1, [](const Call& c) { return list_of_at_least(c, 0, 2).items()[1]; }));
  r.add(make_function_sp("rest", 1, 1, rest));
  r.add(make_function_sp("is_empty", 1, 1, is_empty));
}

}  // namespace vnt::stdlib
