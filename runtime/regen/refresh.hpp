// Stale-node repair (paper section 3.5): local sections that an accepted subsampled move did not visit keep
// values computed from an older border value. They are repaired when something reads them, one section
// at a time (cost of the section, never of N).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>

#include "runtime/core/rng.hpp"
#include "runtime/trace/trace.hpp"
#include "runtime/value/value.hpp"

namespace vnt {

class Trace;
struct Node;
struct Scaffold;

/// Whether a border other than `except_border` has stale sections. When only it has (subsampled_mh's own border
/// after an accepted move), nothing its sections read from outside them can need a repair.
bool stale_elsewhere(Trace& trace, const Node* except_border);

/// Brings `x` and the deterministic values it depends on up to date. Free when nothing is stale. Sections of
/// `except_border` are left alone (subsampled_mh handles its own border's sections itself).
void ensure_fresh(Trace& trace, Node* x, Node* except_border = nullptr);

/// What the walks of ensure_fresh from a section's inputs found that can be stale: the nodes they met that read a
/// node with a version. Only such a node can be a stale section root, since a stale border is a border (an accepted
/// subsampled move went through it) or a node counted stale by a new edge. A section read at every transition then
/// checks these few nodes instead of walking a few dozen (subsampled_mh's sections reading another border's, as in
/// the paper's state-space model with phi and sig both subsampled). The list stays complete until a new edge moves
/// the trace's shape (the watch's holder, ChainCache, drops it then) or a node first becomes a border, which may have
/// had no version when the walks passed it (Trace::border_generation).
struct FreshWatch {
  static constexpr size_t kMax = 8;
  std::array<Node*, kMax> nodes{};
  uint64_t generation = 0;      // the trace's border generation when it was complete
  uint8_t count = 0;
  bool complete = false;        // noted by walks that ended without a move of the shape
  bool walk_each_time = false;  // it found more than kMax, or a walk was not made
};

/// Makes the inputs of a section fresh (ensure_fresh, sections of `border` aside), walking from each the first
/// time and checking what `watch` noted after:
///
///     InputsFresh fresh(trace, border, watch);
///     if (!fresh.watched()) for (Node* x : inputs) if (!fresh(x)) return;
///
/// fresh(x) is false when a repair moved the shape: the section must be found again. When the object goes, the
/// watch is complete if every call walked without a move.
class InputsFresh {
 public:
  InputsFresh(Trace& trace, Node* border, FreshWatch& watch);
  ~InputsFresh();
  InputsFresh(const InputsFresh&) = delete;
  InputsFresh& operator=(const InputsFresh&) = delete;
  /// Whether the watch was complete, and its nodes are checked already: no input is to be walked.
  bool watched() const { return watched_; }
  bool operator()(Node* x);

 private:
  Trace& trace_;
  Node* border_;
  FreshWatch& watch_;
  uint64_t epoch_;
  bool noting_ = false;
  bool watched_ = false;
};

/// Makes every value a scaffold will read fresh (its nodes and their parents). Call before detaching it. False if a
/// repair moved the trace's shape: it changed a procedure, or a stale section took another branch, which removes
/// nodes (of the scaffold too, perhaps its principals: a move that accepted without visiting a section of another
/// shape leaves it so). It then stops, and the scaffold must be built again, its principals chosen again.
[[nodiscard]] bool ensure_scaffold_fresh(Trace& trace, const Scaffold& scaffold, Node* except_border = nullptr);

/// Thrown by a kernel whose scaffold a repair made stale (ensure_scaffold_fresh) before it proposed anything: its
/// caller selects the block again.
struct ShapeMoved {};

/// Thrown instead of repairing the stale section of `root` under `border` when the repair would change the
/// structure of the trace (its scaffold has brush: an `if` whose branch may change) while a regen or a kernel holds
/// nodes it will come back to (Trace::holds_nodes): the removed nodes could be among its scaffold, its Db, the
/// sections it has visited or the border's children it numbers. The holder puts everything back, calls repair(),
/// and builds its scaffold (a kernel: selects its block) again.
struct DeferredRepair {
  Node* border;
  Node* root;
  /// Repairs the section, now that nothing holds nodes of it.
  void repair(Trace& trace) const;
};

/// Runs a kernel's `attempt` and returns its result, or nullopt if it threw ShapeMoved, or DeferredRepair (which is
/// then repaired, everything having been put back): the caller selects its block again.
template <class Attempt>
auto unless_shape_moved(Trace& trace, Attempt&& attempt) -> std::optional<decltype(attempt())> {
  try {
    return attempt();
  } catch (const ShapeMoved&) {
    return std::nullopt;
  } catch (const DeferredRepair& d) {
    d.repair(trace);
    return std::nullopt;
  }
}

/// Bounds the rounds of one move that repairs interrupt (unless_shape_moved gave nullopt, and the move starts again
/// with the same random numbers). Each round repaired a stale section, so there are at most as many as there were
/// stale sections when the first ended. More means a repair that leaves its section looking stale, which would start
/// the same move for ever: an internal error instead of a hang.
class RestartBound {
 public:
  /// Call once per round that starts again.
  void next(const Trace& trace);

 private:
  size_t rounds_ = 0;
  size_t limit_ = 0;
};

/// Runs `round` (a kernel's transition: its value, or nullopt if a repair interrupted it) until it is not interrupted,
/// putting the trace's stream back before each new round: the move is then the one a trace repaired beforehand makes.
/// New numbers would favour the moves that meet no stale section.
template <class Round>
bool until_not_interrupted(Trace& trace, Round&& round) {
  const Rng stream = trace.rng();
  for (RestartBound restarts;; restarts.next(trace)) {
    if (const std::optional<bool> done = round()) return *done;
    trace.rng() = stream;
  }
}

/// Recomputes the local section rooted at `root` (a child of `border`) from the border's current value.
void refresh_section(Trace& trace, Node* border, Node* root);

/// The same for a section whose roots (all of them: see section_group.hpp) and scaffold the caller has built.
void refresh_section(Trace& trace, Node* border, std::span<Node* const> roots, Scaffold& scaffold);

/// Writes back values a repair replaced (a transition that fails after repairing a section leaves it stale again, as
/// it was). A scope_include among them has its choice tagged in the block the values it gets back compute, as a
/// detach and regen would have moved it: the next repair of the section finds it there.
void put_back_values(Trace& trace, std::span<std::pair<Node*, Value>> values);

/// Repairs every stale section in the trace: O(N). A test and debugging aid (make_consistent).
void refresh_all(Trace& trace);

}  // namespace vnt
