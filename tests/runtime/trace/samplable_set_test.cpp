// SamplableSet: O(1) insert and erase, and rollback of a recorded stretch of changes to the exact order.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "runtime/core/rng.hpp"
#include "runtime/trace/samplable_set.hpp"
#include "runtime/trace/scopes.hpp"

namespace vnt::samplable_set_tests {
namespace {

TEST_CASE("samplable set: rollback restores the items in their order after any inserts and erases") {
  Rng rng(7);
  for (int round = 0; round < 200; ++round) {
    SamplableSet<int> s;
    for (int i = 0; i < static_cast<int>(rng.below(12)); ++i) s.insert(static_cast<int>(rng.below(20)));
    s.erase(static_cast<int>(rng.below(20)));  // unrecorded changes stay
    std::vector<int> before = s.items();
    s.record(true);
    for (int k = 0; k < 30; ++k) {
      int x = static_cast<int>(rng.below(20));
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
