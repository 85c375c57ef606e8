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

namespace vnt {

class Trace;
struct Node;

class ChainCache {
 public:
  /// Starts a transition on `trace`: chains cached before are forgotten if the trace's shape moved since this
  /// cache's last transition ended (Trace::shape_epoch), or if it is another trace.
  void begin(const Trace& trace);
  /// Ends a transition. If it changed a value that is a procedure (`procedures`), it moves the shape epoch:
  /// other kernels' chains may apply that procedure. Other values leave every chain valid. If the epoch moved
  /// during the transition (a stale section repaired, say), its own chains are not trusted either.
  void end(Trace& trace, bool procedures);

  /// The chain matched at `root` since the cache was last invalidated, or nullptr.
  const SectionChain* find(const Node* root) const;
  void put(Node* root, const SectionChain& chain);
  /// Whether `root` was found not to be a chain since then (a section with several roots, say: matching fails
  /// only after reading most of it, at every visit).
  bool not_a_chain(const Node* root) const;
  void put_not_a_chain(Node* root) { chains_[root] = Entry{window_, true, SectionChain()}; }
  /// The roots of the section `root` belongs to, if it has several and was found since then (section_group).
  const std::vector<Node*>* group(const Node* root) const;
  void put_group(const std::vector<Node*>& roots);
  /// Chains found (for tests: a cache that is never hit proves nothing).
  uint64_t hits() const { return hits_; }

 private:
  struct Entry {
    uint64_t window = 0;  // entries of older windows are invalid: forgetting is O(1), an entry is overwritten
    bool not_a_chain = false;
    SectionChain chain;
  };
  uint64_t trace_ = 0;
  uint64_t epoch_ = 0;   // the trace's shape epoch when this cache's last transition ended
  uint64_t window_ = 0;  // the epoch at which the current run of trusted transitions began
  uint64_t start_ = 0;   // the epoch when the current transition began
  mutable uint64_t hits_ = 0;
  FlatPtrMap<Node, Entry> chains_;
  struct Group {
    uint64_t window = 0;
    std::shared_ptr<const std::vector<Node*>> roots;  // shared by the entries of all of them
  };
  FlatPtrMap<Node, Group> groups_;
};

}  // namespace vnt
