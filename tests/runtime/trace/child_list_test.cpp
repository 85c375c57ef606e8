// ChildList: a node's children, one inline and the rest on the heap, behaves as a std::vector of them.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "runtime/core/rng.hpp"
#include "runtime/trace/child_list.hpp"

namespace vnt::child_list_tests {
namespace {

Node* node(uint64_t k) { return reinterpret_cast<Node*>(static_cast<uintptr_t>(k + 1) * 64); }

bool same(const ChildList& c, const std::vector<Node*>& v) {
  return c.size() == v.size() && std::equal(c.begin(), c.end(), v.begin());
}

TEST_CASE("a child list follows a vector through pushes, inserts, erases and reserves") {
  Rng rng(5);
  for (int round = 0; round < 100; ++round) {
    ChildList c;
    std::vector<Node*> v;
    CHECK(c.capacity() == 1);  // one child needs no allocation
    for (int step = 0; step < 60; ++step) {
      const double u = rng.uniform();
      Node* x = node(rng.below(1000));
      if (u < 0.4 || v.empty()) {
        c.push_back(x);
        v.push_back(x);
      } else if (u < 0.6) {
        const size_t at = rng.below(v.size() + 1);
        CHECK(*c.insert(c.begin() + at, x) == x);
        v.insert(v.begin() + static_cast<std::ptrdiff_t>(at), x);
      } else if (u < 0.9) {
        const size_t at = rng.below(v.size());
        c.erase(c.begin() + at);
        v.erase(v.begin() + static_cast<std::ptrdiff_t>(at));
      } else {
        c.reserve(c.size() + rng.below(5));
      }
      REQUIRE(same(c, v));
      CHECK(c.capacity() >= c.size());
      if (!v.empty()) CHECK(c.back() == v.back());
    }
    // The last occurrence, found from the back as remove_child does.
    if (!v.empty()) {
      Node* x = v[v.size() / 2];
      auto it = std::find(c.rbegin(), c.rend(), x);
      c.erase(std::next(it).base());
      v.erase(std::next(std::find(v.rbegin(), v.rend(), x)).base());
      CHECK(same(c, v));
    }
  }
  ChildList c;
  CHECK_THROWS_AS(c.at(0), std::out_of_range);
}

}  // namespace
}  // namespace vnt::child_list_tests
