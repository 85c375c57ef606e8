// Taking down a deep trace (forget, and the Runtime's destructor) needs no more stack than a shallow one: an API
// user who raises max_depth evaluates on a large stack, but may forget and destroy on an ordinary one.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <memory>

#include "tests/support/on_stack.hpp"
#include "vnt/vnt.hpp"

namespace {

constexpr int kItems = 8000;
// About four levels of evaluation per item; one level takes at most 5 KiB of stack (ASan).
constexpr int kDepth = 5 * kItems;
constexpr size_t kLargeStack = size_t{768} << 20;
// Enough for a directive on a shallow trace under ASan; un-evaluating kItems levels recursively took far more.
constexpr size_t kSmallStack = size_t{1} << 20;

TEST_CASE("forget and the destructor take down a trace built by deep recursion on a small stack") {
  std::unique_ptr<vnt::Runtime> rt;
  vnt::test::on_stack_of(kLargeStack, [&] {
    vnt::Options o;
    o.seed = 1;
    o.max_depth = kDepth;
    rt = std::make_unique<vnt::Runtime>(o);
    rt->execute(
        "[assume range (lambda (i n) (if (>= i n) (list) (pair i (range (+ i 1) n))))]\n"
        "[assume sum (lambda (l) (if (is_empty l) 0 (+ (first l) (sum (rest l)))))]\n"
        "[assume count (mem (lambda (n) (if (= n 0) 0 (+ 1 (count (- n 1))))))]\n"
        "[assume l (range 0 " + std::to_string(kItems) + ")]\n"
        "total: [predict (sum l)]\n"
        "counted: [predict (count " + std::to_string(kItems) + ")]");
  });
  CHECK(rt->report("total").as_double() == double{kItems} * (kItems - 1) / 2);
  vnt::test::on_stack_of(kSmallStack, [&] {
    rt->forget("total");    // a chain of compound calls
    rt->forget("counted");  // through mem: the shared families go with their last request
    CHECK(rt->predict("(+ 1 2)").as_double() == 3);
  });
  vnt::test::on_stack_of(kSmallStack, [&] { rt.reset(); });  // the list built by recursion goes with the trace
}

}  // namespace
