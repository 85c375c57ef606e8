// In-place evaluation of local sections made of primitive applications (see section_dag.hpp).
// SPDX-License-Identifier: Apache-2.0
#include "runtime/regen/section_dag.hpp"

#include <algorithm>

#include "runtime/core/error.hpp"
#include "runtime/core/flat_ptr_map.hpp"
#include "runtime/regen/at_application.hpp"
#include "runtime/regen/border_reach.hpp"
#include "runtime/regen/infinite_density.hpp"
#include "runtime/regen/refresh.hpp"
#include "runtime/regen/regen.hpp"
#include "runtime/regen/section_group.hpp"
#include "runtime/regen/walk.hpp"
#include "runtime/sp/sp.hpp"

namespace vnt {
namespace {

/// The parents a node of the section reads its value from (not the request of a primitive, which is empty).
template <class F>
void for_each_input(Node* n, F&& f) {
  if (n->kind == NodeKind::kLookup) {
    f(as_lookup(n)->source);
    return;
  }
  OutputNode* out = as_output(n);
  if (passes_family_value(out)) {
    f(out->esr_parents.back());
    return;
  }
  f(out->op);
  for (Node* o : out->operands) f(o);
}

/// Whether `c`, a child of the section's node `n`, takes nothing from n's change: the request of a primitive (always
/// empty) or of a compound procedure (the family it asks for is the same whatever the operands: can_absorb_change),
/// and the output of a compound application that has n as an operand (its value is its family's, which reads the
/// operands through lookups: a `let` binding a value of the section). A procedure that follows the border does not.
bool takes_no_change(BorderReach& reach, Node* n, Node* c) {
  if (c->kind != NodeKind::kRequest && c->kind != NodeKind::kOutput) return false;
  OutputNode* out = c->kind == NodeKind::kRequest ? as_request(c)->output : as_output(c);
  if (out->op == n) return false;
  if (c->kind == NodeKind::kRequest && primitive_at(out) != nullptr) return true;
  const ProcPtr* p = std::get_if<ProcPtr>(&out->op->value);
  if (p == nullptr || (*p)->kind() != Procedure::Kind::kCompound || reach.follows(out->op)) return false;
  return c->kind == NodeKind::kRequest ||
         std::find(out->esr_parents.begin(), out->esr_parents.end(), n) == out->esr_parents.end();
}

enum class Kind : uint8_t { kOther, kDeterministic, kLeaf };

/// What finding a section needs besides what it keeps: the nodes met, in the order met, with their kinds, and
/// `at`, which finds a node's place in `found` in O(1), so walking a section is linear in its size (ordering it
/// takes a pass per level it cannot place at once). Reused by every search on a thread (a search starts none), so
/// a search allocates only what the section keeps.
struct Search {
  std::vector<Node*> found;
  std::vector<Kind> kinds;
  FlatPtrMap<Node, uint32_t> at;
  std::vector<uint32_t> deps, deps_end;  // the deterministic inputs of found[i]: deps[deps_end[i-1], deps_end[i])
  std::vector<uint8_t> placed;
  std::vector<Node*> order;
  size_t leaves = 0;

  static Search& start(Node* root) {
    thread_local Search s;
    s.found.assign(1, root);
    s.kinds.clear();
    s.at.clear();
    s.at.reserve(16);  // short probe sequences for the usual dozen nodes (a no-op once grown)
    s.at.emplace(root, 0);
    s.leaves = 0;
    return s;
  }
  void meet(Node* x) {
    if (at.emplace(x, static_cast<uint32_t>(found.size()))) found.push_back(x);
  }
  /// `order` := the deterministic nodes in evaluation order, then the leaves. Passes over the deterministic nodes
  /// in the order met, each placing every node whose deterministic inputs are placed (leaves keep their values):
  /// the order sections always had, so the same error comes first where several nodes would fail. Each node's
  /// deterministic inputs are looked up once, not at every pass.
  void order_nodes() {
    const size_t n = found.size();
    deps.clear();
    deps_end.clear();
    for (size_t i = 0; i < n; ++i) {
      if (kinds[i] == Kind::kDeterministic)
        for_each_input(found[i], [&](Node* x) {
          const uint32_t* j = at.find(x);
          if (j != nullptr && kinds[*j] == Kind::kDeterministic) deps.push_back(*j);
        });
      deps_end.push_back(static_cast<uint32_t>(deps.size()));
    }
    placed.assign(n, 0);
    order.clear();
    while (order.size() + leaves < n) {
      const size_t before = order.size();
      for (size_t i = 0; i < n; ++i) {
        if (kinds[i] != Kind::kDeterministic || placed[i] != 0) continue;
        bool ready = true;
        for (uint32_t d = i == 0 ? 0 : deps_end[i - 1]; d < deps_end[i]; ++d) ready &= placed[deps[d]] != 0;
        if (!ready) continue;
        placed[i] = 1;
        order.push_back(found[i]);
      }
      VNT_ASSERT(order.size() > before, "a local section whose values depend on each other in a cycle");
    }
    for (size_t i = 0; i < n; ++i)
      if (kinds[i] == Kind::kLeaf) order.push_back(found[i]);
  }
};

}  // namespace

const SpProcedure* value_application(Trace& trace, BorderReach& reach, const OutputNode* out) {
  const SpProcedure* p = primitive_at(out);
  if (p == nullptr || p->aux() != nullptr || &p->sp() == trace.scope_include_sp() || !out->esr_parents.empty() ||
      reach.follows(out->op))
    return nullptr;
  return p;
}

SectionDag::SectionDag(Trace& trace, BorderReach& reach, Node* root) {
  Node* border = reach.border();
  roots_.reserve(4);
  roots_.push_back(root);
  Search& s = Search::start(root);
  auto classify = [&](Node* n) {
    if (n->kind == NodeKind::kLookup) return Kind::kDeterministic;
    if (n->kind != NodeKind::kOutput) return Kind::kOther;
    OutputNode* out = as_output(n);
    if (passes_family_value(out)) return reach.follows(out->op) ? Kind::kOther : Kind::kDeterministic;
    const SpProcedure* p = value_application(trace, reach, out);
    if (p == nullptr) return Kind::kOther;
    if (p->sp().is_random()) return Kind::kLeaf;
    return out->constrained ? Kind::kOther : Kind::kDeterministic;
  };
  // The connected part of what follows the border: down from each node to what reads it (a random application
  // keeps its value, so what reads it is outside), up from each node to the values it reads that follow the
  // border too (another read where they meet), up to the children of the border, which are the roots.
  auto matched = [&] {
    for (size_t i = 0; i < s.found.size(); ++i) {
      Node* n = s.found[i];
      const Kind kind = classify(n);
      s.kinds.push_back(kind);
      if (kind == Kind::kOther) return false;
      s.leaves += kind == Kind::kLeaf ? 1 : 0;
      for_each_input(n, [&](Node* x) {
        if (x == border) {
          if (std::find(roots_.begin(), roots_.end(), n) == roots_.end()) roots_.push_back(n);
        } else if (!s.at.contains(x) && reach.follows(x)) {
          s.meet(x);
        }
      });
      if (kind == Kind::kLeaf) continue;
      for (Node* c : n->children) {
        if (takes_no_change(reach, n, c)) continue;
        if (c->kind == NodeKind::kRequest || c->kind == NodeKind::kPlate ||
            (c->kind == NodeKind::kOutput && as_output(c)->op == n))
          return false;
        s.meet(c);
      }
      if (s.found.size() > kMaxNodes || roots_.size() > kMaxSectionRoots) return false;
    }
    return s.leaves > 0;
  };
  if (!matched()) {
    roots_.clear();
    return;
  }
  s.order_nodes();
  keep(s.order, s.leaves);
}

void SectionDag::keep(std::span<Node* const> order, size_t leaves) {
  size_t operands = 0;
  for (Node* x : order)
    operands += x->kind == NodeKind::kLookup || passes_family_value(as_output(x)) ? 1 : as_output(x)->operands.size();
  steps_.reserve(order.size());
  operands_.reserve(operands);
  for (Node* x : order) {
    const auto first = static_cast<uint32_t>(operands_.size());
    bool copies = true;
    if (x->kind == NodeKind::kLookup) {
      operands_.push_back(&as_lookup(x)->source->value);
    } else if (const OutputNode* out = as_output(x); passes_family_value(out)) {
      operands_.push_back(&out->esr_parents.back()->value);
    } else {
      copies = false;
      for (Node* o : out->operands) operands_.push_back(&o->value);
    }
    steps_.push_back({x, first, static_cast<uint32_t>(operands_.size() - first), copies});
  }
  first_leaf_ = order.size() - leaves;
}

bool SectionDag::contains(const Node* n) const {
  return std::any_of(steps_.begin(), steps_.end(), [n](const Step& s) { return s.node == n; });
}

void SectionDag::make_inputs_fresh(Trace& trace, Node* border, FreshWatch& watch) const {
  if (!stale_elsewhere(trace, border)) return;
  // A repair that moves the shape may have removed nodes of this section: it stops there (see the header).
  InputsFresh fresh(trace, border, watch);
  if (fresh.watched()) return;
  bool go = true;
  for (const Step& s : steps_) {
    for_each_input(s.node, [&](Node* x) {
      if (go && x != border && !contains(x)) go = fresh(x);
    });
    if (!go) return;
  }
}

void SectionDag::save(std::vector<Value>& out) const {
  for (const Step& s : deterministic()) out.push_back(s.node->value);
}

void SectionDag::restore(std::vector<Value>::iterator saved) const {
  for (const Step& s : deterministic()) s.node->value = std::move(*saved++);
}

void SectionDag::evaluate() const {
  Rng unused(0);  // deterministic SPs draw nothing
  for (const Step& s : deterministic()) {
    std::span<const Value* const> in = inputs(s);
    if (s.copies) {
      s.node->value = *in[0];
      continue;
    }
    const OutputNode* out = as_output(s.node);
    const TraceOrigins origins(out);
    const Sp& sp = primitive_at(out)->sp();
    s.node->value = at_application(sp, out, [&] { return sp.simulate(Args(in, nullptr, &origins), unused); });
  }
}

double SectionDag::log_density() const {
  double sum = 0;
  for (const Step& s : leaves()) {
    const OutputNode* out = as_output(s.node);
    const TraceOrigins origins(out);
    const Sp& sp = primitive_at(out)->sp();
    sum += at_application(sp, out,
                          [&] { return sp.log_density(s.node->value, Args(inputs(s), nullptr, &origins)); });
  }
  return sum;
}

const Node* SectionDag::infinite_leaf() const {
  for (const Step& s : leaves()) {
    const OutputNode* out = as_output(s.node);
    const TraceOrigins origins(out);
    if (primitive_at(out)->sp().log_density(s.node->value, Args(inputs(s), nullptr, &origins)) == kPosInf)
      return s.node;
  }
  return nullptr;
}

bool SectionDag::changes_procedures(std::vector<Value>::const_iterator saved) const {
  for (const Step& s : deterministic())
    if (is_procedure(s.node->value) || is_procedure(*saved++)) return true;
  return false;
}

}  // namespace vnt
