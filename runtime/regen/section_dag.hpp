// A local section that is not a chain but is still made of primitive applications only, as a datum that reads the
// parameter several times is: (normal (+ (lookup w 0) (* (lookup w 1) x)) 1) is two reads, a few deterministic
// applications where they meet, and one random application that absorbs the change. Such a section is scored by
// evaluating its nodes in place, in an order found once, instead of detaching and regenerating a scaffold: no
// scaffold, no Db, no walk. What the evaluation overwrites is saved, so a rejection puts it back.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "runtime/trace/node.hpp"
#include "runtime/value/value.hpp"

namespace vnt {

struct Node;
struct OutputNode;
class BorderReach;
class SpProcedure;
class Trace;
struct FreshWatch;

/// The primitive SP applied at `out` if a local section of reach's border can evaluate it from values alone: no
/// state (aux), no requested family, not scope_include, and a procedure that does not follow the border (one
/// computed from it would be another section's node, applied as it is); nullptr otherwise.
const SpProcedure* value_application(Trace& trace, BorderReach& reach, const OutputNode* out);

/// Whether `out` applies a compound procedure, an `if` or a mem'd procedure: its value is that of the one family it
/// requested, whatever its operands (Regen), so in a section it passes that value on, as a lookup passes its
/// source's (a mem'd `(w (z i))` whose family is the border, a call of a `lambda`).
inline bool passes_family_value(const OutputNode* out) {
  const ProcPtr* p = std::get_if<ProcPtr>(&out->op->value);
  if (p == nullptr || out->esr_parents.size() != 1) return false;
  const Procedure::Kind k = (*p)->kind();
  return k == Procedure::Kind::kCompound || k == Procedure::Kind::kBranch || k == Procedure::Kind::kMem;
}

class SectionDag {
 public:
  /// At most this many nodes (deterministic and absorbing): larger sections take the general path.
  static constexpr size_t kMaxNodes = 64;

  /// The section of `root`, a child of the border, with the other children whose branches meet its own (as
  /// section_group finds them). It is evaluable if its nodes are lookups, applications of primitive SPs without
  /// state and outputs that pass on their family's value (passes_family_value), ending in random
  /// applications that absorb the change, and at most kMaxNodes; otherwise it knows nothing. The requests and
  /// outputs of compound procedures it passes values to as operands take nothing from them (a `let`).
  SectionDag(Trace& trace, BorderReach& reach, Node* root);
  /// A section that is not evaluable, with its roots (section_group's), for the general path.
  explicit SectionDag(std::vector<Node*> roots) : roots_(std::move(roots)) {}

  bool evaluable() const { return first_leaf_ < steps_.size(); }
  const std::vector<Node*>& roots() const { return roots_; }
  /// Calls f on each node of the section it knows: its roots, and the nodes it evaluates and scores.
  template <class F>
  void for_each_node(F&& f) const {
    for (Node* r : roots_) f(r);
    for (const Step& s : steps_) f(s.node);
  }

  /// Repairs what the section reads besides the border and its own nodes (operands fed by other borders' stale
  /// sections), including the procedures it applies; `watch`, kept with the section, notes what can be stale. A
  /// repair that moves the trace's shape ends it: the section must be found again (its nodes may be gone).
  void make_inputs_fresh(Trace& trace, Node* border, FreshWatch& watch) const;
  /// Appends the current values of the nodes evaluate() writes, for restore().
  void save(std::vector<Value>& out) const;
  /// Puts back what save() took.
  void restore(std::vector<Value>::iterator saved) const;
  /// Recomputes the deterministic nodes from the border's current value; throws what an SP throws (a domain
  /// error: the section has probability zero there).
  void evaluate() const;
  /// The log density of the absorbing nodes under the values in the trace.
  double log_density() const;
  /// The first absorbing node whose density is +inf under the values in the trace (the cold path of a
  /// log_density() of +inf), or nullptr.
  const Node* infinite_leaf() const;
  /// Whether a value evaluate() wrote, or the one saved before it, is a procedure (see resamples_procedures).
  bool changes_procedures(std::vector<Value>::const_iterator saved) const;

 private:
  // A node evaluate() writes (a lookup, a deterministic application, an output passing on its family's value) or
  // log_density() scores (a leaf), and where the values it reads are. An application's operand nodes never change
  // (a new edge is a new node), nor its family while the shape stands (a section is kept no longer), so their
  // values' addresses are found once: a visit reads neither the operand lists nor the operand nodes.
  struct Step {
    Node* node;
    uint32_t first;  // its inputs' values: operands_[first, first + count); a lookup has one, its source's
    uint32_t count;
    bool copies;  // its value is its one input's: a lookup, or an output that passes_family_value
  };
  std::span<const Step> deterministic() const { return {steps_.data(), first_leaf_}; }
  std::span<const Step> leaves() const { return std::span<const Step>(steps_).subspan(first_leaf_); }
  std::span<const Value* const> inputs(const Step& s) const { return {operands_.data() + s.first, s.count}; }
  /// Takes the nodes in evaluation order, then its `leaves` random applications, and where their inputs are.
  void keep(std::span<Node* const> order, size_t leaves);
  bool contains(const Node* n) const;

  std::vector<Node*> roots_;
  std::vector<Step> steps_;  // the deterministic nodes in evaluation order, then the random applications
  std::vector<const Value*> operands_;
  size_t first_leaf_ = 0;
};

}  // namespace vnt
