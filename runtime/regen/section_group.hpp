// The local section a child of a border belongs to. Usually each child of the border roots a section of its own
// (Defs. 6-8 of the sublinear-MH paper), but one datum may read the parameter several times, as
// (normal (+ (lookup w 0) (* (lookup w 1) x)) 1) reads w twice: the branches from those reads meet below, and
// together they are one section with several roots. Found from one root in the cost of the section.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runtime/scaffold/scaffold.hpp"

namespace vnt {

class BorderReach;
class Trace;
struct Node;

struct SectionGroup {
  std::vector<Node*> roots;  // `root` first, then the other children of the border in the order found
  Scaffold scaffold;         // of all of them together
};

/// At most this many children of the border in one section, and 64 nodes per root: beyond, the reads of the
/// parameter do not split into small sections (a value computed from it is read by every datum, say).
constexpr size_t kMaxSectionRoots = 16;
constexpr size_t kMaxSectionNodesPerRoot = 64;

/// The section of `root`, a child of reach.border(); nullopt if it is larger than the limits above.
std::optional<SectionGroup> section_group(Trace& trace, BorderReach& reach, Node* root);

}  // namespace vnt
