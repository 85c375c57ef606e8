// FlatPtrMap: clear() empties the map and keeps it usable, as the scratch of a section search reuses it.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

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

}  // namespace
}  // namespace vnt::flat_ptr_map_tests
