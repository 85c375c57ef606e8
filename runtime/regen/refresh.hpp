// Stale-node repair (paper section 3.5): local sections that an accepted subsampled move did not visit keep
// values computed from an older border value. They are repaired when something reads them, one section
// at a time (cost of the section, never of N).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <span>

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

/// Recomputes the local section rooted at `root` (a child of `border`) from the border's current value.
void refresh_section(Trace& trace, Node* border, Node* root);

/// The same for a section whose roots (all of them: see section_group.hpp) and scaffold the caller has built.
void refresh_section(Trace& trace, Node* border, std::span<Node* const> roots, Scaffold& scaffold);

/// Repairs every stale section in the trace: O(N). A test and debugging aid (make_consistent).
void refresh_all(Trace& trace);

}  // namespace vnt
