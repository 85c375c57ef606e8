// The section chains one subsampled_mh kernel has matched, kept across its transitions: matching a section reads
// a dozen nodes spread over memory (its root, their children, the ancestry of its other operands), more than
// scoring it does, and the shape of a section only changes when something else runs on the trace.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/core/flat_ptr_map.hpp"
#include "runtime/infer/section_chain.hpp"
#include "runtime/regen/refresh.hpp"
#include "runtime/regen/section_dag.hpp"

namespace vnt {

class Trace;
struct Node;
struct Scaffold;

class ChainCache {
 public:
  /// Starts a transition on `trace` through the sections of `border`: chains cached before are forgotten if the
  /// trace's shape moved since this cache's last transition ended (Trace::shape_epoch) in a way that can change
  /// them (ShapeLog::kept_old: directives that only add nodes, as a [predict] or a [sample] reading a border does,
  /// change none), or if it is another trace. If every move since was logged and none was of a procedure, only the
  /// chains and sections holding a node that an edge made or removed, or an observation, names are forgotten (a
  /// move of another choice that replaced one datum's branch costs that datum's section); the watches all are.
  void begin(const Trace& trace, const Node* border);
  /// Ends a transition. If it changed a value that is a procedure (`procedures`), it moves the shape epoch:
  /// other kernels' chains may apply that procedure. Other values leave every chain valid. If the epoch moved
  /// during the transition (a stale section repaired, say), its own chains are not trusted either.
  void end(Trace& trace, bool procedures);
  /// Forgets every chain and section found so far, within a transition whose repairs moved the shape of `trace`.
  void forget(const Trace& trace);

  /// The chain matched at `root` since the cache was last invalidated, or nullptr.
  const SectionChain* find(const Node* root) const;
  void put(Node* root, const SectionChain& chain);
  /// The section `root` belongs to, if it is not a chain and was found since then (SectionDag, or section_group's
  /// roots for one that is not evaluable in place). A root found here is not matched as a chain again (a section
  /// with several roots fails to match only after reading most of it).
  const std::shared_ptr<const SectionDag>* section(const Node* root) const;
  /// `scaffold`: that of a section that is not evaluable in place, whose nodes the section does not know (a move
  /// that links or unlinks one of them forgets it: it may have become evaluable, or changed its roots).
  void put_section(std::shared_ptr<const SectionDag> section, const Scaffold* scaffold = nullptr);
  /// What the section rooted at `root` (a chain's root, a section's first) reads that can be stale: noted by its
  /// first walks since the cache was last invalidated (FreshWatch). Kept apart from the chains, since only a trace
  /// with several borders needs it.
  FreshWatch& watch(Node* root);
  /// Chains found (for tests: a cache that is never hit proves nothing).
  uint64_t hits() const { return hits_; }
  /// Sections that are not chains found (section()).
  uint64_t section_hits() const { return section_hits_; }

 private:
  /// Forgets, without a new window, the chains and sections holding a node named by the moves of the shape since
  /// this cache's last transition ended; false if that is not known (a move not logged, or of a procedure).
  bool forget_touched(const Trace& trace, uint64_t now);
  /// Forgets the chain and the section (all its roots) holding `n` (which may be deleted: it is only a key).
  void forget_holder(const Node* n);
  /// Notes that `n` is a node of the chain or section put at `root`.
  void hold(Node* n, Node* root) {
    if (n == nullptr) return;
    Node*& holder = holders_[n];
    // A node in two entries (a datum read by two borders of the scope) would be forgotten in one only.
    all_held_once_ &= holder == nullptr || holder == root;
    holder = root;
  }

  struct Entry {
    uint64_t window = 0;  // entries of older windows are invalid: forgetting is O(1), an entry is overwritten
    SectionChain chain;
  };
  uint64_t trace_ = 0;
  bool trusted_ = false;  // whether the last transition ended with the epoch it began with
  uint64_t epoch_ = 0;    // the trace's shape epoch when this cache's last transition ended
  uint64_t made_from_ = 0;  // Trace::next_seq then: nodes made since are in no cached section
  std::vector<uint64_t> borders_;  // the borders (Node::seq) of the sections cached in this window
  uint64_t window_ = 0;  // the epoch at which the current run of trusted transitions began
  uint64_t watch_window_ = 0;  // the same for the watches, which any move of the shape but an added node ends
  uint64_t start_ = 0;   // the epoch when the current transition began
  bool all_held_once_ = true;  // no node held by two entries (forget_touched may forget by node) since a reset
  mutable uint64_t hits_ = 0;
  mutable uint64_t section_hits_ = 0;
  FlatPtrMap<Node, Entry> chains_;
  struct Section {
    uint64_t window = 0;
    std::shared_ptr<const SectionDag> section;  // shared by the entries of all its roots
  };
  FlatPtrMap<Node, Section> sections_;
  struct Watch {
    uint64_t window = 0;
    FreshWatch watch;
  };
  FlatPtrMap<Node, Watch> watches_;
  FlatPtrMap<Node, Node*> holders_;  // each node of a cached chain or section: the root of its entry
};

}  // namespace vnt
