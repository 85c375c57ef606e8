// What moved a trace's shape epoch, kept while a cache asks for it: a cache keyed by the epoch can then tell the
// moves that leave what it knows as it was from those that may not (subsampled_mh's check of every node section,
// which a [predict] or [sample] that reads the parameter would otherwise have to make again in full).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <new>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace vnt {

struct Node;

/// One move of Trace::shape_epoch. Nodes are named by Node::seq: one may be deleted since. Their addresses may be
/// read only while they are alive (ShapeLog::sections_to_look_at knows which are).
struct ShapeEvent {
  enum class Kind : uint8_t {
    kOther,      // nothing known: a procedure changed, a kernel moved it, ...
    kDirective,  // a directive began (what it then changes moves the epoch by events of its own)
    kAdd,        // the edge parent -> child was made
    kRemove,     // the edge parent -> child was removed
    kObserved,   // the choice `parent` became observed or no longer is
  };
  Kind kind = Kind::kOther;
  bool parent_constant = false;  // kAdd, kRemove: a constant is in no one's downstream
  uint64_t parent = 0;           // Node::seq
  uint64_t child = 0;
  Node* parent_node = nullptr;    // the same nodes
  Node* child_node = nullptr;
};

/// The events of the epochs after the first watch() until it drops them (too many: a kernel's brush, say).
class ShapeLog {
 public:
  /// Logs from `epoch` (the current one) on, unless it already does: earlier watchers keep their events.
  void watch(uint64_t epoch) {
    if (on_) return;
    on_ = true;
    from_ = epoch;
    events_.clear();
    deleted_.clear();
  }
  /// The trace calls it at each move of its epoch.
  /// Never throws: out of memory only stops the log, as too many events do (the caches it serves start again), so
  /// that removing an edge, which undoes a failed change, cannot fail.
  void note(const ShapeEvent& e) noexcept {
    if (!on_) return;
    if (events_.size() == kMaxEvents) {
      stop();
      return;
    }
    try {
      events_.push_back(e);
    } catch (const std::bad_alloc&) {
      stop();
    }
  }
  /// The trace calls it when it deletes a node, at its epoch `epoch` (which a deletion does not move).
  void note_deleted(uint64_t epoch, uint64_t seq) noexcept {
    if (!on_) return;
    if (deleted_.size() == kMaxEvents) {
      stop();
      return;
    }
    try {
      deleted_.push_back({epoch, seq});
    } catch (const std::bad_alloc&) {
      stop();
    }
  }
  /// The events that moved the epoch from `epoch` to `now`, if all were logged.
  std::optional<std::span<const ShapeEvent>> since(uint64_t epoch, uint64_t now) const {
    if (!on_ || epoch < from_ || now - from_ != events_.size()) return std::nullopt;
    return std::span<const ShapeEvent>(events_).subspan(static_cast<size_t>(epoch - from_));
  }
  /// Whether the moves of the epoch from `epoch` to `now` all left the nodes made before Node::seq `made_from` as
  /// they were, but for new children of the nodes `borders`: no edge from or to one of them that is still there (a
  /// [sample] of a section's value links a node to it and removes it), no choice of theirs observed or no longer,
  /// no procedure changed (kOther). A directive begins, constants gain and lose children and nodes made since are
  /// linked as it likes. False if the moves were not all logged.
  bool kept_old(uint64_t epoch, uint64_t now, uint64_t made_from, std::span<const uint64_t> borders) const;
  /// What a look at a border's node sections has to see again (sections_to_look_at).
  struct Look {
    size_t last = 0;             // how many of the border's last children
    std::vector<Node*> touched;  // the sections these old nodes are in (BorderReach::section_roots finds them)
  };
  /// For a look at the node sections of the border `border` (Node::seq) that found them all passing at `epoch`,
  /// when every node made before `made_from` was there: which sections to look at now, or nullopt for all of them.
  /// The children linked under the border since (new sections, or old nodes moved there, a rejected move's put
  /// back: all after the others) are its last ones. Edges to or from a node deleted since went with it, and edges
  /// from a node not in a section of the border (`in_a_section` says, of a live node; constants, and nodes made
  /// since, which old ones link only through edges of their own) change none. Edges removed from nodes in a section
  /// took structure away (a section that lost nodes is refused for nothing it was not refused for before), unless
  /// made again. Touched, and alive: a node in a section that gained a child, and a choice observed now and not
  /// then or the other way (observed and no longer again, as a rejected move's put back does, leaves it as it was);
  /// they may have changed the sections they are in. A changed procedure (kOther) may have changed any. For a
  /// refusal, which only structure gained can change; never for what holds nodes of a section (a chain: kept_old).
  std::optional<Look> sections_to_look_at(uint64_t epoch, uint64_t now, uint64_t made_from, uint64_t border,
                                          const std::function<bool(Node*)>& in_a_section) const;

 private:
  void stop() noexcept {
    on_ = false;
    events_ = {};
    deleted_ = {};
  }

  static constexpr size_t kMaxEvents = size_t{1} << 13;
  bool on_ = false;
  uint64_t from_ = 0;  // events_[i] moved the epoch from from_ + i to from_ + i + 1
  std::vector<ShapeEvent> events_;
  std::vector<std::pair<uint64_t, uint64_t>> deleted_;  // (epoch, Node::seq) of each node deleted, in order
};

}  // namespace vnt
