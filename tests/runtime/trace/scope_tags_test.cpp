// A scope_include's tag follows its block through moves. A move that changes only the tagged value leaves the tag
// where it is (it is not taken out and put back, which would move its block last in the scope); one that moves the
// block, or the scope's operands, moves the tag.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "runtime/trace/scopes.hpp"
#include "tests/support/engine_fixture.hpp"

namespace vnt::scope_tags_tests {
namespace {

/// The blocks of `scope` in the scope's order, each with how many nodes it holds.
std::vector<std::pair<Value, size_t>> blocks_of(Engine& e, const std::string& scope) {
  std::vector<std::pair<Value, size_t>> out;
  const Scope* s = e.trace().scopes().find(scope);
  if (s == nullptr) return out;
  for (const Value& b : s->blocks().items()) out.emplace_back(b, s->nodes(b)->size());
  return out;
}

TEST_CASE("a tag whose block stays keeps its place, one whose block moves follows it") {
  Engine e(5);
  test::run(e, "[assume b (flip 0.5)] [assume x (scope_include 'q b (normal 0 1))]"
               "[assume y (mem (lambda (i) (scope_include 'r i (normal 0 1))))]"
               "[predict (y 1)] [predict (y 2)] [predict (y 3)]");
  const auto r_before = blocks_of(e, "r");
  REQUIRE(r_before.size() == 3);
  int b_moved = 0;
  bool b_was = std::get<bool>(test::assumed_root(e, "b")->value);
  for (int i = 0; i < 200; ++i) {
    test::run(e, "[infer (mh default one 1)]");
    const bool b = std::get<bool>(test::assumed_root(e, "b")->value);
    b_moved += b != b_was ? 1 : 0;
    b_was = b;
    const auto q = blocks_of(e, "q");
    REQUIRE(q.size() == 1);
    CHECK(values_equal(q[0].first, Value(b)));
    CHECK(q[0].second == 1);
    CHECK(blocks_of(e, "r").size() == 3);
    // The y(i) moved (mh on scope r, one block at a time) without their blocks changing place.
    test::run(e, "[infer (mh r one 1)]");
    const auto r = blocks_of(e, "r");
    REQUIRE(r.size() == 3);
    for (size_t k = 0; k < 3; ++k) {
      CHECK(values_equal(r[k].first, r_before[k].first));
      CHECK(r[k].second == 1);
    }
  }
  CHECK(b_moved > 5);  // the block of q did move
}

// Each observation tags its draw under the block w gives it. subsampled_mh refuses such sections (a block computed
// from the parameter); with 'fallback 'mh the exact move takes every tag to the new w.
TEST_CASE("tags whose block reads a moved parameter follow it") {
  Engine e(2);
  std::string program = "[assume w (scope_include 'w 0 (normal 0 1))]";
  for (int i = 0; i < 12; ++i)
    program += fmt::format("[observe (normal (scope_include 'loc w w) 1) {}]", 0.1 * i);
  test::run(e, program);
  const Node* w = test::assumed_root(e, "w");
  double last = std::get<double>(w->value);
  int moves = 0;
  for (int i = 0; i < 30; ++i) {
    test::run(e, "[infer (subsampled_mh w one 4 0.01 'drift 0.5 1 'fallback 'mh)]");
    const double now = std::get<double>(w->value);
    moves += now != last ? 1 : 0;
    last = now;
    const auto loc = blocks_of(e, "loc");
    REQUIRE(loc.size() == 1);
    CHECK(values_equal(loc[0].first, Value(now)));
    CHECK(loc[0].second == 12);
  }
  CHECK(moves > 3);
}

}  // namespace
}  // namespace vnt::scope_tags_tests
