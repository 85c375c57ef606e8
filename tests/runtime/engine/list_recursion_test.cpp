// Recursion over lists in the trace is linear in memory: every node keeps its list, and the lists of a recursive
// build share a few buffers instead of each holding a copy (before, building n items kept n^2 / 2 slots).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "tests/support/engine_fixture.hpp"
#include "tests/support/on_stack.hpp"

namespace vnt::list_recursion_tests {
namespace {

constexpr int kItems = 20000;
// About three levels of evaluation per item; one level takes at most 5 KiB of stack (ASan).
constexpr int kDepth = 4 * kItems;
constexpr size_t kStack = size_t{512} << 20;

// On a large stack: evaluation recurses as deep as the program (taking the trace down does not).
TEST_CASE("a list built by recursive pair in the trace takes O(n) slots, and a recursion by rest takes none") {
  test::on_stack_of(kStack, [] {
    Engine e(1);
    e.trace().set_max_eval_depth(kDepth);
    const size_t before = List::live_slots();
    test::run(e, fmt::format("[assume range (lambda (i n) (if (>= i n) (list) (pair i (range (+ i 1) n))))]\n"
                             "[assume l (range 0 {})]",
                             kItems));
    const size_t built = List::live_slots() - before;
    CHECK(built <= 4 * size_t{kItems});  // buffers of 8, 18, 38, ... up to about 2n: below 4n in all
    const Value& l = e.trace().global("l")->value;
    REQUIRE(is_list(l));
    CHECK(std::get<ListPtr>(l)->size() == size_t{kItems});

    test::run(e, "[assume sum (lambda (l) (if (is_empty l) 0 (+ (first l) (sum (rest l)))))]\n"
                 "[assume total (sum l)]");
    CHECK(List::live_slots() - before == built);
    CHECK(std::get<double>(e.trace().global("total")->value) == double{kItems} * (kItems - 1) / 2);
  });
}

}  // namespace
}  // namespace vnt::list_recursion_tests
