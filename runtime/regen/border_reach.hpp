// Which nodes change with a border's value. The N local sections below a border must be disjoint (sublinear-MH
// paper, Defs. 6-8): a section may read anything besides its own nodes, except a value that itself follows the
// border, which would be another section's node (two uses of the parameter meeting in one observation, say).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <vector>

#include "runtime/core/flat_ptr_map.hpp"

namespace vnt {

struct Node;

class BorderReach {
 public:
  explicit BorderReach(Node* border) : border_(border) {}
  Node* border() const { return border_; }

  /// Whether x's value changes when the border's does: the border is reached walking up from x through
  /// deterministic nodes (a random choice keeps its value and absorbs the change). Ancestries a few applications
  /// deep, which is what sections read most (data, procedures, a datum's (vector 1 2)), are answered without
  /// allocating; longer walks are remembered, so each such node's ancestry is walked once per BorderReach.
  bool follows(Node* x);
  /// The roots of the node sections x is in (x follows the border): the border's children reached walking up from
  /// x through nodes that follow it, appended to `roots`. False, and `roots` as it was, if the walk passes more than
  /// `max_nodes` nodes (x reads many sections).
  bool section_roots(Node* x, std::vector<Node*>& roots, size_t max_nodes);

 private:
  Node* border_;
  FlatPtrMap<Node, bool> memo_;
  std::vector<Node*> todo_;
};

}  // namespace vnt
