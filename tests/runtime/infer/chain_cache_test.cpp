// ChainCache: chains stay trusted across a kernel's own transitions and are forgotten once anything else has
// moved the trace's shape epoch in a way that can change them (another kernel's transition moves it only if it
// changed a procedure; a directive that only adds nodes changes none; a logged edge forgets only the entries holding
// its nodes), or when the cache is used on another trace.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <array>
#include <memory>
#include <vector>

#include "runtime/infer/chain_cache.hpp"
#include "runtime/trace/trace.hpp"
#include "tests/support/engine_fixture.hpp"

namespace vnt::chain_cache_tests {
namespace {

/// The nodes of the first three directives of `e`.
std::array<Node*, 3> first_three(Engine& e) {
  return {e.directives()[0].root, e.directives()[1].root, e.directives()[2].root};
}

TEST_CASE("a chain cache trusts its own transitions only") {
  Engine a(1), b(1);
  test::run(a, "[assume x (normal 0 1)] [assume w (normal 0 1)]");
  test::run(b, "[assume x (normal 0 1)]");
  Node* key = a.directives().front().root;
  const Node* border = a.directives()[1].root;  // the transitions' border: its new children are new sections
  ChainCache cache;
  cache.begin(a.trace(), border);
  CHECK(cache.find(key) == nullptr);
  cache.put(key, SectionChain{});
  CHECK(cache.find(key) != nullptr);
  cache.end(a.trace(), false);

  cache.begin(a.trace(), border);  // nothing else ran: still trusted
  CHECK(cache.find(key) != nullptr);
  cache.end(a.trace(), false);

  a.trace().touch_shape();  // anything else (a directive, another kernel) moves the epoch
  cache.begin(a.trace(), border);
  CHECK(cache.find(key) == nullptr);
  cache.put(key, SectionChain{});  // re-matched in the new window
  cache.end(a.trace(), false);
  cache.begin(a.trace(), border);
  CHECK(cache.find(key) != nullptr);
  cache.end(a.trace(), false);

  // A transition that changed a procedure moves the epoch: its own chains stay trusted, other caches' do not.
  ChainCache other;
  other.begin(a.trace(), border);
  other.put(key, SectionChain{});
  other.end(a.trace(), false);
  cache.begin(a.trace(), border);
  cache.end(a.trace(), true);
  cache.begin(a.trace(), border);
  CHECK(cache.find(key) != nullptr);
  cache.end(a.trace(), false);
  other.begin(a.trace(), border);
  CHECK(other.find(key) == nullptr);
  other.end(a.trace(), false);

  // Directives that only add nodes, to constants and to the border, leave every cached section as it was.
  test::run(a, "[predict (+ w 1)] [sample (* 2 w)] [predict 1] [assume v (normal 0 1)]");
  cache.begin(a.trace(), border);
  CHECK(cache.find(key) != nullptr);
  cache.end(a.trace(), false);

  test::run(a, "[assume y (normal x 1)]");  // a directive adds an edge from a node made before
  cache.begin(a.trace(), border);
  CHECK(cache.find(key) == nullptr);
  cache.put(key, SectionChain{});
  cache.end(a.trace(), false);

  // Another trace, even at an epoch that happens to match, never sees the first one's entries.
  while (b.trace().shape_epoch() < a.trace().shape_epoch()) b.trace().touch_shape();
  CHECK(b.trace().shape_epoch() == a.trace().shape_epoch());
  cache.begin(b.trace(), b.directives().front().root);
  CHECK(cache.find(key) == nullptr);
  cache.end(b.trace(), false);
}

TEST_CASE("a chain cache also remembers the sections that are not chains, by each of their roots") {
  Engine a(1);
  test::run(a, "[assume x (normal 0 1)] [assume y (normal 0 1)] [assume z (normal 0 1)]");
  const auto [x, y, z] = first_three(a);
  ChainCache cache;
  cache.begin(a.trace(), x);
  CHECK(cache.section(y) == nullptr);
  cache.put_section(std::make_shared<const SectionDag>(std::vector<Node*>{y, z}));
  REQUIRE(cache.section(z) != nullptr);
  CHECK((*cache.section(z))->roots() == std::vector<Node*>{y, z});
  CHECK(*cache.section(y) == *cache.section(z));
  CHECK(cache.find(y) == nullptr);  // a section is not a chain: not a hit
  cache.end(a.trace(), false);
  a.trace().touch_shape();  // sections are forgotten with the chains
  cache.begin(a.trace(), x);
  CHECK(cache.section(y) == nullptr);
  cache.put(x, SectionChain{});
  CHECK(cache.find(x) != nullptr);
  cache.end(a.trace(), false);
}

// A move that links or unlinks a node of a cached entry forgets that entry only (ChainCache::forget_touched); one
// that changes a procedure (kOther) forgets them all.
TEST_CASE("a chain cache forgets only the entries holding a node a move linked or unlinked") {
  Engine a(1);
  test::run(a, "[assume w (normal 0 1)] [assume p (* w 2)] [assume q (* w 3)]");
  const auto [border, p, q] = first_three(a);
  ChainCache cache;
  cache.begin(a.trace(), border);
  cache.put(p, SectionChain{});
  cache.put(q, SectionChain{});
  cache.end(a.trace(), false);

  test::run(a, "r: [predict (+ p 1)]");  // an edge from p to a new node: p's entry may have changed, q's not
  cache.begin(a.trace(), border);
  CHECK(cache.find(p) == nullptr);
  CHECK(cache.find(q) != nullptr);
  cache.put(p, SectionChain{});
  cache.end(a.trace(), false);

  test::run(a, "[forget r]");  // the edge removed again
  cache.begin(a.trace(), border);
  CHECK(cache.find(p) == nullptr);
  CHECK(cache.find(q) != nullptr);
  cache.put(p, SectionChain{});
  cache.end(a.trace(), false);

  a.trace().touch_shape();  // not logged as an edge: every entry may have changed
  cache.begin(a.trace(), border);
  CHECK(cache.find(p) == nullptr);
  CHECK(cache.find(q) == nullptr);
  cache.end(a.trace(), false);
}

}  // namespace
}  // namespace vnt::chain_cache_tests
