// What moved a trace's shape epoch, kept while a cache asks for it: a cache keyed by the epoch can then tell the
// moves that leave what it knows as it was from those that may not (subsampled_mh's check of every node section,
// which a [predict] or [sample] that reads the parameter would otherwise have to make again in full).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace vnt {

/// One move of Trace::shape_epoch. Nodes are named by Node::seq, never by address: one may be deleted since.
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
  /// Like kept_old, but true also when the old nodes only lost structure: an edge to or from a node deleted since
  /// is gone with it (a family a move replaced, a section a [forget] removed), and edges removed and made again
  /// (a rejected move) are as they were. For what only structure gained can change, as whether a section is
  /// refused (a section that lost nodes is refused for nothing it was not refused for before), never for what
  /// holds nodes of a section (a chain: it would hold deleted ones). False also if an old child of a border was
  /// linked again after a new one: new children must stay the last (check_every_section looks for them there).
  bool gained_nothing_old(uint64_t epoch, uint64_t now, uint64_t made_from, std::span<const uint64_t> borders) const;

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
