// Regen and detach walk a scaffold with an explicit stack: a chain of deterministic nodes as long as the program
// (here 12 000, built with one directive per link, as an embedding application would) needs no native stack
// proportional to its length. Recursive walks used about 270 bytes of stack per link: 8 MiB overflowed at
// about 30 000 links, and the 512 KiB these tests run on at about 2 000.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>

#include "runtime/infer/mh.hpp"
#include "tests/support/block_spec.hpp"
#include "tests/support/engine_fixture.hpp"
#include "tests/support/on_stack.hpp"

namespace vnt::deep_chain_tests {
namespace {

constexpr size_t kSmallStack = 512 * 1024;

/// `[assume <prefix><i> (<op> <prefix><i-1> <arg>)]` for i in [from, to].
std::string chain(const std::string& prefix, int from, int to, const std::string& op, const std::string& arg) {
  std::string s;
  for (int i = from; i <= to; ++i)
    s += fmt::format("[assume {0}{1} ({2} {0}{3} {4})]\n", prefix, i, op, i - 1, arg);
  return s;
}

double global_number(Engine& e, const std::string& name) { return std::get<double>(e.trace().global(name)->value); }

BlockSpec block_a() { return test::block("a", BlockSpec::Mode::kOne); }

constexpr int kLinks = 12000;

TEST_CASE("mh accepts and rejects through a chain of 12 000 deterministic nodes on a small stack") {
  Engine e(3);
  test::run(e, "[assume x0 (scope_include 'a 0 (normal 0 1))]\n" + chain("x", 1, kLinks, "+", "1") +
                   fmt::format("[observe (normal x{} 1) {}]", kLinks, kLinks));
  MhOptions accept;
  accept.decision = MhOptions::Decision::kAccept;
  MhOptions reject;
  reject.decision = MhOptions::Decision::kReject;
  for (int round = 0; round < 3; ++round) {
    const std::string before = test::fingerprint_of(e);
    test::on_stack_of(kSmallStack, [&] { mh_transition(e.trace(), block_a(), reject); });
    CHECK(test::fingerprint_of(e) == before);
    const double old_x0 = global_number(e, "x0");
    test::on_stack_of(kSmallStack, [&] { mh_transition(e.trace(), block_a(), accept); });
    CHECK(global_number(e, "x0") != old_x0);
    double expected = global_number(e, "x0");  // the same additions, in the same order, as the chain's
    for (int i = 1; i <= kLinks; ++i) expected += 1;
    CHECK(global_number(e, fmt::format("x{}", kLinks)) == expected);
    CHECK(test::inconsistent_nodes(e) == 0);
  }
}

// The proposals with x0 < 0 fail in the middle of the chain, at (log x): the walk then gives back every node it
// has regenerated below that link, and the move is rejected with the trace exactly as it was.
TEST_CASE("a proposal failing in the middle of a long chain is undone on a small stack") {
  constexpr int kHalf = kLinks / 2;
  Engine e(5);
  test::run(e, "[assume x0 (scope_include 'a 0 (normal 0.5 1))]\n" + chain("x", 1, kHalf, "+", "0") +
                   fmt::format("[assume y0 (log x{})]\n", kHalf) + chain("y", 1, kHalf, "+", "0") +
                   fmt::format("[observe (normal y{} 1) 0]", kHalf));
  REQUIRE(global_number(e, "x0") > 0);
  MhOptions accept;
  accept.decision = MhOptions::Decision::kAccept;
  int failed = 0;
  int moved = 0;
  for (int round = 0; round < 12; ++round) {
    const std::string before = test::fingerprint_of(e);
    bool accepted = false;
    test::on_stack_of(kSmallStack, [&] { accepted = mh_transition(e.trace(), block_a(), accept); });
    if (accepted) {
      ++moved;
      CHECK(global_number(e, "x0") > 0);
    } else {
      ++failed;
      CHECK(test::fingerprint_of(e) == before);
    }
    CHECK(global_number(e, fmt::format("x{}", kHalf)) == global_number(e, "x0"));
    CHECK(global_number(e, fmt::format("y{}", kHalf)) == std::log(global_number(e, "x0")));
    CHECK(test::inconsistent_nodes(e) == 0);
  }
  // Both paths were taken (each proposal is below zero with probability 0.31).
  CHECK(failed > 0);
  CHECK(moved > 0);
}

}  // namespace
}  // namespace vnt::deep_chain_tests
