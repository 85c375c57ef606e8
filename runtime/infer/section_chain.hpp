// The common shape of a local section, evaluated without touching the trace: a node passing on the border's value
// (a lookup of it, or a mem'd call whose family it is), then deterministic primitive applications, each using the
// previous value once, ending in one random primitive application that absorbs the change (e.g. w ->
// (linear_logistic w x_i) -> (bernoulli p) observed at y_i).
// Its l_i is computed from values alone; an accepted move writes the new values back, a rejected one has
// nothing to undo. Sections of any other shape take the general scaffold path.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "runtime/value/value.hpp"

namespace vnt {

struct Node;
class BorderReach;
class Trace;
struct FreshWatch;

/// l_i of a local section whose log density is `before` under the border's old value and `after` under the
/// proposed one. Probability zero under the proposal rejects the move (-inf), as in exact mh. Probability zero
/// under the old value only (an approximate move accepted a value that a section it did not draw rules out) makes
/// the current state impossible, and MH takes any move out of it into positive probability (+inf).
inline double log_weight(double after, double before) {
  if (after == -std::numeric_limits<double>::infinity()) return after;
  if (before == -std::numeric_limits<double>::infinity()) return std::numeric_limits<double>::infinity();
  return after - before;
}

class SectionChain {
 public:
  static constexpr size_t kMaxLinks = 6;

  /// Recognises the shape below `root`, a child of the border; false if the section has any other shape,
  /// including one whose other operands follow the border (sections that meet).
  bool match(Trace& trace, BorderReach& reach, Node* root);

  /// l = log p(leaf | chain from b_new) - log p(leaf | chain from b_old). With `current_is_old`, the old
  /// chain is the values in the trace (a fresh section); otherwise it is recomputed from b_old (a stale one).
  /// The new chain values are appended to `out`. A domain error on the new chain gives nullopt: the move has
  /// probability zero (as when regen fails), and `out` still gets one value per link. A stale chain that b_old
  /// makes fail has density zero under it (see log_weight). A density of +inf under either value throws the error of
  /// infinite_density.hpp, with `kernel` the name of the kernel.
  std::optional<double> delta(const Value& b_new, const Value& b_old, bool current_is_old,
                              std::vector<Value>& out, std::string_view kernel) const;

  /// Repairs what the section reads besides the border (operands and procedures fed by other borders' stale
  /// sections). The first call that finds other stale sections also notes whether those are made of constants
  /// only, which can never be stale: later calls on this chain then cost nothing. Otherwise `watch` (kept with the
  /// chain) notes what can be stale. A repair that moves the trace's shape ends it: the chain must be matched again
  /// (its nodes may be gone).
  void make_inputs_fresh(Trace& trace, Node* border, FreshWatch& watch) const;

  /// Writes an accepted move: the lookup takes b_new, the links their new values from `values`. Returns whether
  /// a link's value was or is now a procedure (see resamples_procedures).
  bool commit(const Value& b_new, const Value* values) const;

  Node* root() const { return root_; }
  size_t links() const { return n_; }
  /// Calls f on each node of the chain: the root, the links, the leaf.
  template <class F>
  void for_each_node(F&& f) const {
    f(root_);
    for (size_t i = 0; i < n_; ++i) f(link_[i]);
    f(leaf_);
  }

 private:
  Node* root_ = nullptr;
  // Compact: subsampled_mh keeps one per section it has visited (ChainCache).
  std::array<Node*, kMaxLinks> link_{};
  std::array<uint16_t, kMaxLinks> arg_{};  // which operand of link i is the previous value
  uint16_t leaf_arg_ = 0;
  uint8_t n_ = 0;
  enum class Inputs : uint8_t { kUnknown, kConstant, kOther };
  mutable Inputs inputs_ = Inputs::kUnknown;
  Node* leaf_ = nullptr;
};

}  // namespace vnt
