// Lists as views of shared buffers: rest and pair share a buffer where they can, every list keeps its items
// whatever is built on it, and lists compare by their items, not by where they are stored.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

#include "runtime/value/value.hpp"

namespace vnt::list_tests {
namespace {

std::string show(const List& l) { return to_string(list_value(l)); }

List numbers(std::vector<double> xs) { return List(std::vector<Value>(xs.begin(), xs.end())); }

/// Whether b's items are a's from `offset` on, in the same slots: the two share one buffer.
bool same_slots(const List& a, size_t offset, const List& b) { return a.items().data() + offset == b.items().data(); }

TEST_CASE("rest is a view of the same buffer") {
  List l = numbers({1, 2, 3});
  List r = l.rest();
  CHECK(show(r) == "(2 3)");
  CHECK(same_slots(l, 1, r));
  CHECK(show(l) == "(1 2 3)");
  CHECK(values_equal(r.items()[0], Value(2.0)));
  CHECK(r.rest().rest().empty());
  CHECK(show(r.rest().rest()) == "()");
}

TEST_CASE("the empty list holds no items and pair onto it makes a one-item list") {
  List e;
  CHECK(e.empty());
  CHECK(e.items().empty());
  CHECK(show(e.prepend(Value(7.0))) == "(7)");
  CHECK(e.empty());
}

TEST_CASE("pair on the front-most list shares its buffer, building a list by pair copies O(n) items in all") {
  const size_t before = List::live_slots();
  List l;
  int copies = 0;
  for (int i = 999; i >= 0; --i) {
    List next = l.prepend(Value(static_cast<double>(i)));
    if (!l.empty() && !same_slots(next, 1, l)) ++copies;
    l = next;
  }
  REQUIRE(l.size() == 1000);
  for (size_t i = 0; i < l.size(); ++i) CHECK(values_equal(l.items()[i], Value(static_cast<double>(i))));
  CHECK(copies <= 8);  // buffers of 8, 18, 38, ...: each copy doubles the room
  // Only the last buffer is alive: l holds it, and each earlier one went with the list that was copied out of it.
  CHECK(List::live_slots() - before <= 2 * 1000 + 8);
}

TEST_CASE("pair twice on one list gives two independent lists, and the tail is unchanged") {
  List tail = List().prepend(Value(2.0)).prepend(Value(1.0));
  List a = tail.prepend(Value(10.0));
  List b = tail.prepend(Value(20.0));
  CHECK(show(a) == "(10 1 2)");
  CHECK(show(b) == "(20 1 2)");
  CHECK(show(tail) == "(1 2)");
  CHECK(same_slots(a, 1, tail));        // the first claims the free slot before tail
  CHECK_FALSE(same_slots(b, 1, tail));  // the second finds it taken and copies
  // Each result is front-most in its own buffer, so building on either shares again.
  List aa = a.prepend(Value(100.0));
  List bb = b.prepend(Value(200.0));
  CHECK(same_slots(aa, 1, a));
  CHECK(same_slots(bb, 1, b));
  CHECK(show(aa) == "(100 10 1 2)");
  CHECK(show(bb) == "(200 20 1 2)");
  CHECK(show(a) == "(10 1 2)");
}

TEST_CASE("pair on a view that is not front-most copies and leaves the other lists alone") {
  List l = List().prepend(Value(3.0)).prepend(Value(2.0)).prepend(Value(1.0));
  List r = l.rest();  // (2 3): the slot before it is l's first item
  List p = r.prepend(Value(9.0));
  CHECK(show(p) == "(9 2 3)");
  CHECK_FALSE(same_slots(p, 1, r));
  CHECK(show(l) == "(1 2 3)");
  CHECK(show(r) == "(2 3)");
  // A list made from a vector fills its buffer: pair onto it copies.
  List full = numbers({4, 5});
  CHECK(show(full.prepend(Value(3.0))) == "(3 4 5)");
  CHECK(show(full) == "(4 5)");
}

TEST_CASE("a view keeps the items it shows alive after the list it came from is gone") {
  List r;
  {
    List l = List(std::vector<Value>{make_string("a"), make_string("b")});
    r = l.rest();
  }
  CHECK(show(r) == "(\"b\")");
}

TEST_CASE("lists compare and hash by their items, wherever those are stored") {
  List shared = List().prepend(Value(3.0)).prepend(Value(2.0)).prepend(Value(1.0));
  Value a = list_value(shared);
  Value b = make_list({Value(1.0), Value(2.0), Value(3.0)});
  Value c = list_value(numbers({0, 1, 2, 3}).rest());
  CHECK(values_equal(a, b));
  CHECK(values_equal(a, c));
  CHECK(keys_equal(b, c));
  CHECK(value_hash(a) == value_hash(b));
  CHECK(value_hash(a) == value_hash(c));
  CHECK_FALSE(values_equal(a, list_value(shared.rest())));
  CHECK(values_equal(list_value(List()), make_list({})));
  CHECK(values_equal(list_value(numbers({5}).rest()), make_list({})));
}

// Many threads pair onto one front-most list at once: exactly one of them may take the free slot before it.
TEST_CASE("concurrent pairs onto one list: one shares its buffer, all are correct") {
  List tail = List().prepend(Value(0.0));
  constexpr int kThreads = 8;
  std::vector<List> out(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] { out[t] = tail.prepend(Value(static_cast<double>(t + 1))); });
  for (std::thread& th : threads) th.join();
  int shared = 0;
  for (int t = 0; t < kThreads; ++t) {
    CHECK(show(out[t]) == "(" + std::to_string(t + 1) + " 0)");
    if (same_slots(out[t], 1, tail)) ++shared;
  }
  CHECK(shared == 1);
}

}  // namespace
}  // namespace vnt::list_tests
