// ShapeLog: which moves of the shape epoch leave the nodes made before a point as they were (kept_old), and which
// only took structure away from them (gained_nothing_old).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "runtime/trace/shape_log.hpp"

namespace vnt::shape_log_tests {
namespace {

using K = ShapeEvent::Kind;

/// A log watched from epoch 0; nodes made before seq 100 are old, node 1 is the border.
struct Log {
  ShapeLog log;
  uint64_t epoch = 0;
  Log() { log.watch(0); }
  void note(K kind, uint64_t parent = 0, uint64_t child = 0, bool parent_constant = false) {
    log.note(ShapeEvent{kind, parent_constant, parent, child});
    ++epoch;
  }
  void deleted(uint64_t seq) { log.note_deleted(epoch, seq); }
  bool kept() const { return log.kept_old(0, epoch, 100, kBorder); }
  bool gained_nothing() const { return log.gained_nothing_old(0, epoch, 100, kBorder); }
  static constexpr uint64_t kBorder[] = {1};
};

TEST_CASE("shape log: new nodes and new children of the border keep the old nodes as they were") {
  Log l;
  l.note(K::kDirective);
  l.note(K::kAdd, 1, 120);        // a new section
  l.note(K::kAdd, 120, 121);      // linked below it
  l.note(K::kAdd, 5, 122, true);  // a constant's new child
  l.note(K::kAdd, 130, 7);        // a new family's root under an old request's output
  l.note(K::kAdd, 8, 123);        // an old node's new child, removed again
  l.note(K::kRemove, 8, 123);
  l.note(K::kObserved, 124);
  CHECK(l.kept());
  CHECK(l.gained_nothing());
}

TEST_CASE("shape log: an old node's new child, or a procedure that changed, may have changed an old section") {
  for (int what = 0; what < 4; ++what) {
    CAPTURE(what);
    Log l;
    if (what == 0) l.note(K::kAdd, 8, 123);  // stays
    if (what == 1) l.note(K::kAdd, 8, 9);    // between old nodes
    if (what == 2) l.note(K::kOther);
    if (what == 3) l.note(K::kObserved, 9);  // an old choice observed
    CHECK_FALSE(l.kept());
    CHECK_FALSE(l.gained_nothing());
  }
}

TEST_CASE("shape log: removing old nodes takes structure away, which only gained_nothing_old allows") {
  Log l;
  l.note(K::kRemove, 1, 20);  // a section of the border removed
  l.note(K::kRemove, 20, 21);
  l.note(K::kRemove, 22, 9);  // an old family's root from the request it served
  l.note(K::kObserved, 23);   // a forgotten observation's choice
  l.deleted(20);
  l.deleted(21);
  l.deleted(22);
  l.deleted(23);
  CHECK_FALSE(l.kept());
  CHECK(l.gained_nothing());
  // An edge removed between nodes that are both still there is not.
  l.note(K::kRemove, 9, 10);
  CHECK_FALSE(l.gained_nothing());
  // Made again (a rejected move puts its old family back): as it was.
  l.note(K::kAdd, 9, 10);
  CHECK(l.gained_nothing());
  CHECK_FALSE(l.kept());
  // Made twice, removed once: one more edge.
  l.note(K::kAdd, 9, 10);
  CHECK_FALSE(l.gained_nothing());
}

// The check looks for new sections at the end of the border's children: an old child linked again after a new one
// would hide it.
TEST_CASE("shape log: an old child of the border linked again after a new one may hide it") {
  Log l;
  l.note(K::kRemove, 1, 20);  // a rejected move: an old section taken out, and put back
  l.note(K::kAdd, 1, 20);
  l.note(K::kAdd, 1, 120);    // then a new section
  CHECK(l.gained_nothing());
  Log m;
  m.note(K::kAdd, 1, 120);    // a new section first
  m.note(K::kRemove, 1, 20);
  m.note(K::kAdd, 1, 20);     // the old one goes after it
  CHECK_FALSE(m.gained_nothing());
  Log n;
  n.note(K::kAdd, 1, 120);    // a new section that went again
  n.note(K::kRemove, 1, 120);
  n.deleted(120);
  n.note(K::kRemove, 1, 20);
  n.note(K::kAdd, 1, 20);
  CHECK(n.gained_nothing());
}

TEST_CASE("shape log: a log that stopped, with too many events, knows nothing") {
  Log l;
  for (int i = 0; i < (1 << 13); ++i) l.note(K::kDirective);
  CHECK(l.kept());
  l.note(K::kDirective);
  CHECK_FALSE(l.kept());
  CHECK_FALSE(l.gained_nothing());
}

}  // namespace
}  // namespace vnt::shape_log_tests
