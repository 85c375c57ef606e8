// In-place evaluation of local sections made of primitive applications (see section_dag.hpp).
// SPDX-License-Identifier: Apache-2.0
#include "runtime/regen/section_dag.hpp"

#include <algorithm>

#include "runtime/core/error.hpp"
#include "runtime/regen/border_reach.hpp"
#include "runtime/regen/infinite_density.hpp"
#include "runtime/regen/refresh.hpp"
#include "runtime/regen/section_group.hpp"
#include "runtime/regen/walk.hpp"
#include "runtime/sp/sp.hpp"

namespace vnt {
namespace {

bool has(const std::vector<Node*>& v, const Node* n) { return std::find(v.begin(), v.end(), n) != v.end(); }

/// The parents a node of the section reads its value from (not the request of a primitive, which is empty).
template <class F>
void for_each_input(Node* n, F&& f) {
  if (n->kind == NodeKind::kLookup) {
    f(as_lookup(n)->source);
    return;
  }
  OutputNode* out = as_output(n);
  f(out->op);
  for (Node* o : out->operands) f(o);
}

}  // namespace

const SpProcedure* value_application(Trace& trace, BorderReach& reach, const OutputNode* out) {
  const SpProcedure* p = primitive_at(out);
  if (p == nullptr || p->aux() != nullptr || &p->sp() == trace.scope_include_sp() || !out->esr_parents.empty() ||
      reach.follows(out->op))
    return nullptr;
  return p;
}

SectionDag::SectionDag(Trace& trace, BorderReach& reach, Node* root) : roots_{root} {
  Node* border = reach.border();
  std::vector<Node*> found{root}, deterministic;
  enum class Kind { kOther, kDeterministic, kLeaf };
  auto classify = [&](Node* n) {
    if (n->kind == NodeKind::kLookup) {
      deterministic.push_back(n);
      return Kind::kDeterministic;
    }
    if (n->kind != NodeKind::kOutput) return Kind::kOther;
    OutputNode* out = as_output(n);
    const SpProcedure* p = value_application(trace, reach, out);
    if (p == nullptr) return Kind::kOther;
    if (p->sp().is_random()) {
      leaves_.push_back(n);
      return Kind::kLeaf;
    }
    if (out->constrained) return Kind::kOther;
    deterministic.push_back(n);
    return Kind::kDeterministic;
  };
  // The connected part of what follows the border: down from each node to what reads it (a random application
  // keeps its value, so what reads it is outside), up from each node to the values it reads that follow the
  // border too (another read where they meet), up to the children of the border, which are the roots.
  auto matched = [&] {
    for (size_t i = 0; i < found.size(); ++i) {
      Node* n = found[i];
      const Kind kind = classify(n);
      if (kind == Kind::kOther) return false;
      for_each_input(n, [&](Node* x) {
        if (x == border) {
          if (!has(roots_, n)) roots_.push_back(n);
        } else if (!has(found, x) && reach.follows(x)) {
          found.push_back(x);
        }
      });
      if (kind == Kind::kLeaf) continue;
      for (Node* c : n->children) {
        if (c->kind == NodeKind::kRequest) {
          if (primitive_at(as_request(c)->output) == nullptr) return false;
          continue;
        }
        if (c->kind == NodeKind::kPlate || (c->kind == NodeKind::kOutput && as_output(c)->op == n)) return false;
        if (!has(found, c)) found.push_back(c);
      }
      if (found.size() > kMaxNodes || roots_.size() > kMaxSectionRoots) return false;
    }
    return !leaves_.empty();
  };
  if (!matched()) {
    roots_.clear();
    leaves_.clear();
    return;
  }
  // Evaluation order: a node once every deterministic node it reads has its value (leaves keep theirs).
  nodes_.reserve(deterministic.size());
  while (nodes_.size() < deterministic.size()) {
    const size_t placed = nodes_.size();
    for (Node* n : deterministic) {
      if (has(nodes_, n)) continue;
      bool ready = true;
      for_each_input(n, [&](Node* x) { ready &= !has(deterministic, x) || has(nodes_, x); });
      if (ready) nodes_.push_back(n);
    }
    VNT_ASSERT(nodes_.size() > placed, "a local section whose values depend on each other in a cycle");
  }
}

void SectionDag::make_inputs_fresh(Trace& trace, Node* border) const {
  if (!stale_elsewhere(trace, border)) return;
  auto repair = [&](Node* n) {
    for_each_input(n, [&](Node* x) {
      if (x != border && !has(nodes_, x) && !has(leaves_, x)) ensure_fresh(trace, x, border);
    });
  };
  for (Node* n : nodes_) repair(n);
  for (Node* n : leaves_) repair(n);
}

void SectionDag::save(std::vector<Value>& out) const {
  for (Node* n : nodes_) out.push_back(n->value);
}

void SectionDag::restore(std::vector<Value>::iterator saved) const {
  for (Node* n : nodes_) n->value = std::move(*saved++);
}

void SectionDag::evaluate() const {
  Rng unused(0);  // deterministic SPs draw nothing
  for (Node* n : nodes_) {
    if (n->kind == NodeKind::kLookup) {
      n->value = as_lookup(n)->source->value;
      continue;
    }
    OutputNode* out = as_output(n);
    ArgBuffer args(out);
    n->value = primitive_at(out)->sp().simulate(args.args(nullptr), unused);
  }
}

double SectionDag::log_density() const {
  double sum = 0;
  for (Node* n : leaves_) {
    OutputNode* out = as_output(n);
    ArgBuffer args(out);
    sum += primitive_at(out)->sp().log_density(n->value, args.args(nullptr));
  }
  return sum;
}

const Node* SectionDag::infinite_leaf() const {
  for (Node* n : leaves_) {
    OutputNode* out = as_output(n);
    ArgBuffer args(out);
    if (primitive_at(out)->sp().log_density(n->value, args.args(nullptr)) == kPosInf) return n;
  }
  return nullptr;
}

bool SectionDag::changes_procedures(std::vector<Value>::const_iterator saved) const {
  for (Node* n : nodes_)
    if (is_procedure(n->value) || is_procedure(*saved++)) return true;
  return false;
}

}  // namespace vnt
