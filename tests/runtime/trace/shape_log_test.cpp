// ShapeLog: which moves of the shape epoch leave the nodes made before a point as they were (kept_old), and which
// node sections of a border a look for refusals has to see again (sections_to_look_at).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "runtime/trace/node.hpp"
#include "runtime/trace/shape_log.hpp"

namespace vnt::shape_log_tests {
namespace {

using K = ShapeEvent::Kind;

/// A log watched from epoch 0; nodes made before seq 100 are old, node 1 is the border. Whether a parent is in a
/// section of the border is `in_section` for all of them.
struct Log {
  ShapeLog log;
  uint64_t epoch = 0;
  bool in_section = true;
  std::map<uint64_t, std::unique_ptr<Node>> nodes;  // named by the events' edges, by seq
  Log() { log.watch(0); }
  Node* node(uint64_t seq) {
    std::unique_ptr<Node>& n = nodes[seq];
    if (!n) {
      n = std::make_unique<Node>(NodeKind::kLookup, nullptr);
      n->seq = seq;
    }
    return n.get();
  }
  void note(K kind, uint64_t parent = 0, uint64_t child = 0, bool parent_constant = false) {
    const bool edge = kind == K::kAdd || kind == K::kRemove;
    log.note(ShapeEvent{kind, parent_constant, parent, child, edge || kind == K::kObserved ? node(parent) : nullptr,
                        edge ? node(child) : nullptr});
    ++epoch;
  }
  void deleted(uint64_t seq) { log.note_deleted(epoch, seq); }
  bool kept() const { return log.kept_old(0, epoch, 100, kBorder); }
  std::optional<ShapeLog::Look> look_at() const {
    return log.sections_to_look_at(0, epoch, 100, 1, [this](Node*) { return in_section; });
  }
  /// How many of the border's last children to look at (nullopt: all sections).
  std::optional<size_t> look() const {
    const auto l = look_at();
    return l ? std::optional<size_t>(l->last) : std::nullopt;
  }
  /// The nodes whose sections to look at, by seq.
  std::vector<uint64_t> touched() const {
    std::vector<uint64_t> seqs;
    if (const auto l = look_at())
      for (const Node* n : l->touched) seqs.push_back(n->seq);
    return seqs;
  }
  static constexpr uint64_t kBorder[] = {1};
};

constexpr std::optional<size_t> kAll;

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
  CHECK(l.look() == 1);  // the new section
}

TEST_CASE("shape log: an old node's new child in a section, or a choice observed or no longer, may have changed the "
          "sections it is in; a procedure that changed, any") {
  for (int what = 0; what < 4; ++what) {
    CAPTURE(what);
    Log l;
    if (what == 0) l.note(K::kAdd, 8, 123);  // stays
    if (what == 1) l.note(K::kAdd, 8, 9);    // between old nodes
    if (what == 2) l.note(K::kObserved, 8);  // an old choice observed
    if (what == 3) l.note(K::kOther);
    CHECK_FALSE(l.kept());
    CHECK(l.look() == (what < 3 ? std::optional<size_t>(0) : kAll));
    CHECK(l.touched() == (what < 3 ? std::vector<uint64_t>{8} : std::vector<uint64_t>{}));
    l.in_section = false;  // a new child of a node outside the border's sections joins none of them
    CHECK(l.look() == (what < 3 ? std::optional<size_t>(0) : kAll));
    CHECK(l.touched() == (what == 2 ? std::vector<uint64_t>{8} : std::vector<uint64_t>{}));
  }
}

TEST_CASE("shape log: a choice observed and no longer again, as a rejected move leaves it, is as it was") {
  Log l;
  l.note(K::kObserved, 8);
  l.note(K::kObserved, 9);
  l.note(K::kObserved, 8);
  CHECK(l.look() == 0);
  CHECK(l.touched() == std::vector<uint64_t>{9});
  l.note(K::kObserved, 9);
  CHECK(l.touched().empty());
}

TEST_CASE("shape log: each node that gained children is named once, in order of seq") {
  Log l;
  l.note(K::kAdd, 9, 130);
  l.note(K::kAdd, 8, 131);
  l.note(K::kAdd, 9, 132);
  l.note(K::kAdd, 7, 133);  // gained, and lost again
  l.note(K::kRemove, 7, 133);
  l.note(K::kAdd, 1, 134);  // a new section
  CHECK(l.look() == 1);
  CHECK(l.touched() == std::vector<uint64_t>{8, 9});
  l.deleted(8);  // a node deleted since names no section
  CHECK(l.touched() == std::vector<uint64_t>{9});
}

TEST_CASE("shape log: nodes and edges taken away leave the sections' refusals as they were") {
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
  CHECK(l.look() == 0);
  l.note(K::kRemove, 9, 10);  // an edge removed between nodes that are both still there: a section lost it
  CHECK(l.look() == 0);
  l.note(K::kAdd, 9, 10);  // made again (a rejected move puts its old family back): as it was
  CHECK(l.look() == 0);
  l.note(K::kAdd, 9, 10);  // made twice: one more edge, in the sections of 9
  CHECK(l.look() == 0);
  CHECK(l.touched() == std::vector<uint64_t>{9});
}

// The check looks at the border's last children: those linked since the last look, new ones or old ones moved or put
// back there.
TEST_CASE("shape log: the children linked under the border since, and still there, are the last ones") {
  Log a;
  a.note(K::kAdd, 1, 120);    // a new section
  a.note(K::kRemove, 1, 20);  // an old one taken out by a move, and put back by its rejection, after the new one
  a.note(K::kAdd, 1, 20);
  CHECK(a.look() == 2);
  Log b;
  b.note(K::kAdd, 1, 120);  // a new section that went again
  b.note(K::kRemove, 1, 120);
  b.deleted(120);
  b.note(K::kAdd, 1, 30);  // an old node moved under the border (a point that changed expert)
  b.note(K::kRemove, 1, 31);  // and another that left
  CHECK(b.look() == 1);
}

TEST_CASE("shape log: a log that stopped, with too many events, knows nothing") {
  Log l;
  for (int i = 0; i < (1 << 13); ++i) l.note(K::kDirective);
  CHECK(l.kept());
  CHECK(l.look() == 0);
  l.note(K::kDirective);
  CHECK_FALSE(l.kept());
  CHECK(l.look() == kAll);
}

}  // namespace
}  // namespace vnt::shape_log_tests
