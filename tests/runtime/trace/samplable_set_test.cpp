// SamplableSet: O(1) insert and erase, and rollback of a recorded stretch of changes to the exact order.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "runtime/core/rng.hpp"
#include "runtime/trace/samplable_set.hpp"
#include "runtime/trace/scopes.hpp"

namespace vnt::samplable_set_tests {
namespace {

/// Random inserts and erases, some recorded and rolled back, on a set of T made from small numbers by `item`.
template <class T, class Make>
void check_rollback(Make item) {
  Rng rng(7);
  for (int round = 0; round < 200; ++round) {
    SamplableSet<T> s;
    for (int i = 0; i < static_cast<int>(rng.below(12)); ++i) s.insert(item(rng.below(20)));
    s.erase(item(rng.below(20)));  // unrecorded changes stay
    std::vector<T> before = s.items();
    s.record(true);
    for (int k = 0; k < 30; ++k) {
      T x = item(rng.below(20));
      if (rng.uniform() < 0.5) s.insert(x); else s.erase(x);
    }
    s.rollback();
    CHECK(s.items() == before);
    for (size_t i = 0; i < before.size(); ++i) {
      CHECK(s.contains(before[i]));
      s.erase(before[i]);  // the index agrees with the order: each erase finds its item
    }
    CHECK(s.empty());
  }
}

TEST_CASE("samplable set: rollback restores the items in their order after any inserts and erases") {
  check_rollback<int>([](uint64_t k) { return static_cast<int>(k); });
  // Pointers are indexed by a flat table (tombstones on erase, rehashed as they pile up).
  check_rollback<Node*>([](uint64_t k) { return reinterpret_cast<Node*>(static_cast<uintptr_t>(k + 1) * 64); });
}

TEST_CASE("samplable set of pointers: many inserts and erases keep the index right") {
  Rng rng(11);
  SamplableSet<Node*> s;
  std::vector<bool> in(500, false);
  auto node = [](size_t k) { return reinterpret_cast<Node*>(static_cast<uintptr_t>(k + 1) * 64); };
  for (int step = 0; step < 20000; ++step) {
    const size_t k = rng.below(500);
    if (rng.uniform() < 0.5) {
      s.insert(node(k));
      in[k] = true;
    } else {
      s.erase(node(k));
      in[k] = false;
    }
  }
  size_t count = 0;
  for (size_t k = 0; k < 500; ++k) {
    CHECK(s.contains(node(k)) == in[k]);
    count += in[k] ? 1 : 0;
  }
  REQUIRE(s.size() == count);
  for (size_t i = 0; i < s.size(); ++i) CHECK(s.contains(s.at(i)));
}

TEST_CASE("scope table: rollback restores scopes, blocks and the order of their nodes") {
  std::vector<Node*> nodes;
  for (uintptr_t i = 1; i <= 6; ++i) nodes.push_back(reinterpret_cast<Node*>(i * 64));
  ScopeTable t;
  t.add("a", Value(1.0), nodes[0]);
  t.add("a", Value(1.0), nodes[1]);
  t.add("a", Value(2.0), nodes[2]);
  t.add("a", Value(3.0), nodes[3]);
  auto order = [&](const std::string& scope) {
    std::vector<Value> blocks = t.find(scope)->blocks().items();
    std::string out;
    for (const Value& b : blocks) {
      out += to_string(b) + ":";
      for (Node* n : *t.find(scope)->nodes(b)) out += std::to_string(reinterpret_cast<uintptr_t>(n) / 64);
      out += " ";
    }
    return out;
  };
  std::string before = order("a");
  t.record(true);
  t.remove("a", Value(1.0), nodes[0]);
  t.remove("a", Value(2.0), nodes[2]);  // block 2 goes, block 3 takes its place
  t.add("a", Value(2.0), nodes[4]);
  t.add("b", Value(0.0), nodes[5]);
  t.add("a", Value(1.0), nodes[0]);
  t.rollback();
  t.record(false);
  CHECK(order("a") == before);
  CHECK(t.find("b") == nullptr);
  t.record(true);
  t.remove("a", Value(3.0), nodes[3]);
  t.record(false);  // committed: the emptied block is gone for good
  CHECK(t.find("a")->blocks().size() == 2);
}

}  // namespace
}  // namespace vnt::samplable_set_tests
