// The scaffold of a set of principal nodes (paper Defs. 2-5): resampling set D (with regen counts),
// brush T, absorbing set A, and the border the regen/detach walks start from.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "runtime/core/flat_ptr_map.hpp"
#include "runtime/value/value.hpp"

namespace vnt {

struct Node;
class Trace;

/// How a principal node gets its new value during regen (absent: resimulate from the prior).
struct ProposalKernel {
  enum class Kind { kDrift, kForce };
  Kind kind = Kind::kDrift;
  double sigma = 0;  // drift: Gaussian random-walk step (elementwise on vectors)
  Value forced;      // force: the value to set (observe)
};

/// The principals' proposals, looked up for every node a regen applies (most have none).
using ProposalKernels = FlatPtrMap<Node, ProposalKernel>;

struct Scaffold {
  std::vector<Node*> principals;
  FlatPtrMap<Node, int> drg;  // resampling nodes -> regen count
  FlatPtrSet<Node> absorbing;
  FlatPtrSet<Node> brush;
  std::vector<Node*> border;
  ProposalKernels kernels;
  const Node* local_border = nullptr;  // a local section's: it moves, though it is not in the scaffold

  bool is_resampling(const Node* n) const { return drg.contains(n); }
  bool is_absorbing(const Node* n) const { return absorbing.contains(n); }
  bool is_brush(const Node* n) const { return brush.contains(n); }
  /// Whether the scaffold can change n's value: resampled, brush, or the border a local section reads.
  bool moves(const Node* n) const { return n == local_border || is_resampling(n) || is_brush(n); }
  const ProposalKernel* kernel(const Node* n) const { return kernels.find(n); }
};

/// Builds the scaffold of `principals`. Throws kInference if a proposal would have to change an observed
/// value (an observed choice would be resampled rather than absorb the change). With a `hard_border`, the
/// scaffold stops there: its children (the local sections of subsampled MH) are left out.
Scaffold build_scaffold(Trace& trace, std::span<Node* const> principals,
                        ProposalKernels kernels = {}, Node* hard_border = nullptr);

/// The scaffold of one local section: `root` (a child of `border`) and its scaffold descendants, as if
/// `border` had changed. The border itself is not part of it.
Scaffold build_local_scaffold(Trace& trace, Node* border, Node* root);

/// The same for a section with several roots (the branches of one datum that reads the parameter several times;
/// see section_group.hpp); nullopt once more than `max_nodes` nodes would be in it.
std::optional<Scaffold> build_local_scaffold(Trace& trace, Node* border, std::span<Node* const> roots,
                                             size_t max_nodes);

/// Whether `child` can keep its value and be re-scored when `parent` changes (Def. 4).
bool can_absorb_change(const Scaffold& s, Node* child, Node* parent);

/// Whether a node `s` resamples holds a procedure now, so that moving it can change which procedure an
/// application uses. Section chains cached by subsampled_mh (ChainCache) name the SPs of their links by node;
/// any other change of value leaves them valid, since their shape changes only with edges and constrained
/// flags, which move the trace's shape epoch themselves.
bool resamples_procedures(const Scaffold& s);

}  // namespace vnt
