// What moved a trace's shape epoch, kept while a cache asks for it: a cache keyed by the epoch can then tell the
// moves that leave what it knows as it was from those that may not (subsampled_mh's check of every node section,
// which a [predict] or [sample] that reads the parameter would otherwise have to make again in full).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
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
  bool kept_old(uint64_t epoch, uint64_t now, uint64_t made_from, std::span<const uint64_t> borders) const {
    const auto events = since(epoch, now);
    if (!events) return false;
    auto is_border = [&](uint64_t seq) {
      for (uint64_t b : borders)
        if (b == seq) return true;
      return false;
    };
    using K = ShapeEvent::Kind;
    std::vector<std::pair<uint64_t, uint64_t>> open;  // edges made from an old node to a new one, not yet removed
    for (const ShapeEvent& e : *events) {
      const bool edge = e.kind == K::kAdd || e.kind == K::kRemove;
      if (e.kind == K::kDirective || (e.kind == K::kObserved && e.parent >= made_from) ||
          (edge && (e.parent >= made_from || (is_border(e.parent) ? e.child >= made_from : e.parent_constant))))
        continue;
      if (!edge || e.child < made_from) return false;
      const std::pair<uint64_t, uint64_t> pe{e.parent, e.child};
      if (e.kind == K::kAdd) {
        open.push_back(pe);
        continue;
      }
      const auto it = std::find(open.begin(), open.end(), pe);
      if (it == open.end()) return false;
      open.erase(it);
    }
    return open.empty();
  }

 private:
  void stop() noexcept {
    on_ = false;
    events_ = {};
  }

  static constexpr size_t kMaxEvents = size_t{1} << 13;
  bool on_ = false;
  uint64_t from_ = 0;  // events_[i] moved the epoch from from_ + i to from_ + i + 1
  std::vector<ShapeEvent> events_;
};

}  // namespace vnt
