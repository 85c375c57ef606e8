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

class ChainCache {
 public:
  /// Starts a transition on `trace` through the sections of `border`: chains cached before are forgotten if the
  /// trace's shape moved since this cache's last transition ended (Trace::shape_epoch) in a way that can change
  /// them (ShapeLog::kept_old: directives that only add nodes, as a [predict] or a [sample] reading a border does,
  /// change none), or if it is another trace.
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
  void put_section(std::shared_ptr<const SectionDag> section);
  /// What the section rooted at `root` (a chain's root, a section's first) reads that can be stale: noted by its
  /// first walks since the cache was last invalidated (FreshWatch). Kept apart from the chains, since only a trace
  /// with several borders needs it.
  FreshWatch& watch(Node* root);
  /// Chains found (for tests: a cache that is never hit proves nothing).
  uint64_t hits() const { return hits_; }

 private:
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
  uint64_t start_ = 0;   // the epoch when the current transition began
  mutable uint64_t hits_ = 0;
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
};

}  // namespace vnt
