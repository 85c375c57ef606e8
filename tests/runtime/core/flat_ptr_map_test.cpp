// FlatPtrMap: clear() empties the map and keeps it usable, as the scratch of a section search reuses it.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <vector>

#include "runtime/core/flat_ptr_map.hpp"

namespace vnt::flat_ptr_map_tests {
namespace {

TEST_CASE("a cleared flat map finds nothing it held and takes new entries") {
  int keys[40];
  FlatPtrMap<int, int> m;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 40; ++i) CHECK(m.emplace(&keys[i], i + round));
    m.erase(&keys[3]);  // a tombstone, which clear() must drop too
    CHECK(m.size() == 39);
    CHECK(*m.find(&keys[39]) == 39 + round);
    m.clear();
    CHECK(m.empty());
    for (int& k : keys) CHECK(m.find(&k) == nullptr);
  }
}

// The scaffold builder's scratch sets are cleared and reused; it drops one whose table grew past a few thousand
// slots, which it reads from capacity().
TEST_CASE("a cleared flat set keeps its table, and a large one can be dropped") {
  std::vector<int> keys(5000);
  FlatPtrSet<int> s;
  CHECK(s.capacity() == 0);
  for (int& k : keys) CHECK(s.insert(&k));
  const size_t grown = s.capacity();
  CHECK(grown > keys.size());
  s.clear();
  CHECK(s.empty());
  CHECK(s.capacity() == grown);
  CHECK_FALSE(s.contains(&keys[17]));
  s = {};
  CHECK(s.capacity() == 0);
  CHECK(s.insert(&keys[17]));
  CHECK(s.contains(&keys[17]));
}

}  // namespace
}  // namespace vnt::flat_ptr_map_tests
