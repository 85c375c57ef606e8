// Scaffold construction: extend D from the principal nodes through children that cannot absorb the change,
// find the brush by counting disabled requests per family, then the border and the regen counts.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include "runtime/core/diagnostics.hpp"
#include "runtime/scaffold/scaffold.hpp"
#include "runtime/sp/sp.hpp"
#include "runtime/syntax/expr.hpp"
#include "runtime/trace/plate.hpp"
#include "runtime/trace/procedures.hpp"
#include "runtime/trace/trace.hpp"

namespace vnt {
namespace {

/// What a Builder works in, kept per thread and cleared for each: building the scaffold of every transition
/// allocated a queue, a node order and three sets afresh (a tenth of a small mh transition). Builders never nest.
struct BuildScratch {
  std::vector<std::pair<Node*, Node*>> queue;  // (node, the parent that changed), first in first out from `head`
  std::vector<Node*> order;
  FlatPtrMap<Node, uint32_t> disabled;
  FlatPtrSet<Node> counted, seen;
  bool in_use = false;

  /// Empties everything. What a large scaffold grew is dropped: a table, or clearing it would cost every small
  /// scaffold after it; a vector, or the thread would keep its memory.
  void reset() {
    constexpr size_t kKeptSlots = 4096;
    if (queue.capacity() > kKeptSlots) queue = {};
    if (order.capacity() > kKeptSlots) order = {};
    queue.clear();
    order.clear();
    if (disabled.capacity() > kKeptSlots) disabled = {};
    if (counted.capacity() > kKeptSlots) counted = {};
    if (seen.capacity() > kKeptSlots) seen = {};
    disabled.clear();
    counted.clear();
    seen.clear();
  }
};

class ScratchLease {
 public:
  ScratchLease() : s_(scratch()) {
    VNT_ASSERT(!s_.in_use, "scaffold builders nested");
    s_.reset();
    s_.in_use = true;
  }
  ~ScratchLease() { s_.in_use = false; }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;
  BuildScratch& get() { return s_; }

 private:
  static BuildScratch& scratch() {
    thread_local BuildScratch s;
    return s;
  }
  BuildScratch& s_;
};

class Builder {
 public:
  Builder(Trace& t, Scaffold& s, Node* hard_border)
      : trace_(t), s_(s), hard_border_(hard_border), queue_(lease_.get().queue), order_(lease_.get().order),
        disabled_(lease_.get().disabled), counted_(lease_.get().counted), seen_(lease_.get().seen) {}

  void extend(std::span<Node* const> principals) {
    for (Node* p : principals) {
      if (!s_.is_resampling(p)) {
        add_resampling(p);
        push_children(p);
      }
    }
    run();
  }

  /// A local section: `root` reacts to a change of `border`, which is not itself in the scaffold.
  /// Returns false, leaving the scaffold partial, once more than `max_nodes` nodes are in it.
  bool extend_local(Node* border, std::span<Node* const> roots, size_t max_nodes) {
    for (Node* root : roots) queue_.emplace_back(root, border);
    return run(max_nodes);
  }

  void push_children(Node* n) {
    if (n == hard_border_) return;  // the local sections below a hard border are handled lazily
    for (Node* c : n->children) queue_.emplace_back(c, n);
  }

  bool run(size_t max_nodes = SIZE_MAX) {
    for (size_t head = 0; head < queue_.size();) {
      if (order_.size() > max_nodes) return false;
      auto [node, parent] = queue_[head++];
      if (s_.is_resampling(node) || inert_request(node)) continue;
      if (!can_absorb_change(s_, node, parent)) {
        s_.absorbing.erase(node);
        add_resampling(node);
        push_children(node);
      } else if (s_.absorbing.insert(node)) {
        order_.push_back(node);
      }
    }
    return true;
  }

  void find_brush() {
    for (Node* n : order_)
      if (n->kind == NodeKind::kRequest && s_.is_resampling(n)) disable_requests(as_request(n));
    s_.brush.for_each([&](Node* b) {
      s_.drg.erase(b);
      s_.absorbing.erase(b);
    });
  }

  void find_border_and_counts(std::span<Node* const> principals) {
    for (Node* n : order_) {
      if (!seen_.insert(n)) continue;
      if (s_.is_absorbing(n)) {
        s_.border.push_back(n);
      } else if (s_.is_resampling(n)) {
        if (n == hard_border_) {
          // Its children are not consumers in this scaffold: only the border walk holds it.
          s_.border.push_back(n);
          s_.drg[n] = 1;
          continue;
        }
        // The regen count is the number of consumers that will regen and extract this node: children in the
        // scaffold (brush children are lookups and requesters, which release it when un-evaluated).
        bool has_scaffold_child = false;
        int consumers = 0;
        for (Node* c : n->children) {
          bool live = s_.is_resampling(c) || s_.is_absorbing(c);
          has_scaffold_child |= live;
          consumers += live || s_.is_brush(c) ? 1 : 0;
        }
        if (!has_scaffold_child) s_.border.push_back(n);
        s_.drg[n] = consumers + (has_scaffold_child ? 0 : 1);
      }
    }
    // A maker that absorbs a change of its arguments (make_crp's alpha) sets them in the state its applications read:
    // attached before any of them is regenerated, detached after all of them are extracted. (Not stable_partition:
    // its buffer's allocation may fail silently, and running out of memory here must fail the transition.)
    auto maker = [&](Node* n) { return absorbing_maker(n); };
    if (std::any_of(s_.border.begin(), s_.border.end(), maker)) {
      std::vector<Node*> ordered;
      ordered.reserve(s_.border.size());
      std::copy_if(s_.border.begin(), s_.border.end(), std::back_inserter(ordered), maker);
      std::copy_if(s_.border.begin(), s_.border.end(), std::back_inserter(ordered), std::not_fn(maker));
      s_.border = std::move(ordered);
    }
    // An observed choice in D is unconstrained by the detach and constrained again by the regen when the procedure
    // it applies changed (a collapsed coin picked by a moved key: its flip moves to the new coin). A change of its
    // operands it must absorb: an SP that cannot (none yet) would have it drawn again.
    for (Node* n : order_) {
      if (s_.is_resampling(n) && n->constrained && !s_.is_resampling(as_output(n)->op) &&
          std::find(principals.begin(), principals.end(), n) == principals.end()) {
        SourceSpan span = n->expr ? n->expr->span : SourceSpan{};
        throw Error(ErrorKind::kInference,
                    fmt::format("this proposal would change an observed value (the observation at {} cannot "
                                "absorb the change)",
                                span_location(span).empty() ? "?" : span_location(span)),
                    span);
      }
    }
  }

 private:
  bool absorbing_maker(Node* n) const {
    if (!s_.is_absorbing(n) || n->kind != NodeKind::kOutput || !is_procedure(n->value)) return false;
    const Value& op = as_output(n)->op->value;
    const auto* p = is_procedure(op) ? dynamic_cast<const SpProcedure*>(std::get<ProcPtr>(op).get()) : nullptr;
    return p != nullptr && !p->sp().is_random();
  }

  /// The request of a primitive SP is always empty: a change of its operands cannot affect it, so it stays out
  /// of the scaffold (it would only be an absorbing node of weight 0).
  bool inert_request(Node* n) const {
    if (n->kind != NodeKind::kRequest) return false;
    OutputNode* out = as_request(n)->output;
    return !s_.is_resampling(out->op) && is_procedure(out->op->value) &&
           std::get<ProcPtr>(out->op->value)->kind() == Procedure::Kind::kPrimitive;
  }

  void add_resampling(Node* n) {
    s_.drg.emplace(n, 0);
    order_.push_back(n);
  }

  void disable_requests(RequestNode* req) {
    // Once per request: one in D that is also in a disabled family (the else branch of an `if` whose predicate
    // changes, calling a mem'd procedure with an argument that changes) would count twice, and a family it shares
    // with a request outside D (the same key asked elsewhere) would be taken for brush.
    if (!counted_.insert(req)) return;
    for (Node* root : req->output->esr_parents)
      if (++disabled_[root] == root->num_requests) disable_family(root);
  }

  void disable_family(Node* n) {
    if (!s_.brush.insert(n)) return;
    if (n->kind == NodeKind::kOutput) {
      OutputNode* out = as_output(n);
      s_.brush.insert(out->request);
      disable_requests(out->request);
      for (Node* o : out->operands) disable_family(o);
      disable_family(out->op);
    }
  }

  ScratchLease lease_;
  Trace& trace_;
  Scaffold& s_;
  Node* hard_border_;
  std::vector<std::pair<Node*, Node*>>& queue_;
  std::vector<Node*>& order_;
  FlatPtrMap<Node, uint32_t>& disabled_;
  FlatPtrSet<Node>& counted_;  // requests whose families disabled_ counts
  FlatPtrSet<Node>& seen_;     // find_border_and_counts's
};

}  // namespace

bool can_absorb_change(const Scaffold& s, Node* node, Node* parent) {
  switch (node->kind) {
    case NodeKind::kConstant: return true;
    case NodeKind::kPlate: return parent != as_plate(node)->procedure;  // rows are rescored, never resampled
    case NodeKind::kLookup: return false;
    case NodeKind::kRequest: {
      OutputNode* out = as_request(node)->output;
      if (s.is_resampling(out->op) || !is_procedure(out->op->value)) return false;
      auto k = std::get<ProcPtr>(out->op->value)->kind();
      // Primitive requests are empty and compound ones do not depend on operand values.
      return k == Procedure::Kind::kPrimitive || k == Procedure::Kind::kCompound;
    }
    case NodeKind::kOutput: {
      OutputNode* out = as_output(node);
      if (s.is_resampling(out->op) || parent == out->op || parent == out->request) return false;
      if (!is_procedure(out->op->value)) return false;
      Procedure& p = *std::get<ProcPtr>(out->op->value);
      if (p.kind() != Procedure::Kind::kPrimitive) {
        for (Node* e : out->esr_parents)
          if (e == parent) return false;
        return true;  // the value is the requested family's; operand changes reach it through lookups
      }
      const Sp& sp = static_cast<SpProcedure&>(p).sp();
      for (size_t i = 0; i < out->operands.size(); ++i)
        if (out->operands[i] == parent && !sp.can_absorb(i)) return false;
      return true;
    }
  }
  return false;
}

bool resamples_procedures(const Scaffold& s) {
  bool any = false;
  s.drg.for_each([&](const Node* n, int) { any |= is_procedure(n->value); });
  return any;
}

Scaffold build_scaffold(Trace& trace, std::span<Node* const> principals,
                        ProposalKernels kernels, Node* hard_border) {
  Scaffold s;
  s.principals.assign(principals.begin(), principals.end());
  s.kernels = std::move(kernels);
  Builder b(trace, s, hard_border);
  b.extend(principals);
  b.find_brush();
  b.find_border_and_counts(principals);
  return s;
}

Scaffold build_local_scaffold(Trace& trace, Node* border, Node* root) {
  Node* roots[] = {root};
  return *build_local_scaffold(trace, border, roots, SIZE_MAX);
}

std::optional<Scaffold> build_local_scaffold(Trace& trace, Node* border, std::span<Node* const> roots,
                                             size_t max_nodes) {
  Scaffold s;
  s.local_border = border;
  Builder b(trace, s, nullptr);
  if (!b.extend_local(border, roots, max_nodes)) return std::nullopt;
  b.find_brush();
  b.find_border_and_counts({});
  return s;
}

}  // namespace vnt
