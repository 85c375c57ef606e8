// Whether pgibbs's scaffold allows ancestor sampling: which group's walk regenerates each resampling node first, and
// the earliest group whose principals' values each node is computed from.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/infer/ancestor_sampling.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "runtime/core/flat_ptr_map.hpp"
#include "runtime/regen/walk.hpp"
#include "runtime/scaffold/scaffold.hpp"
#include "runtime/sp/sp.hpp"
#include "runtime/syntax/expr.hpp"
#include "runtime/trace/node.hpp"
#include "runtime/trace/trace.hpp"

namespace vnt {
namespace {

constexpr size_t kNothing = SIZE_MAX;  // a value computed from no principal

/// What the branches of `if`s whose predicate the move changes read: a forced regeneration evaluates the branch taken
/// again (brush), so the `if`'s value depends on the resampling nodes its branches name as well as on its parents.
using BranchReads = FlatPtrMap<Node, std::vector<Node*>>;

template <class F>
void for_each_read(const BranchReads& branch_reads, Node* n, F&& f) {
  for_each_parent(n, f);
  if (const std::vector<Node*>* more = branch_reads.find(n))
    for (Node* p : *more) f(p);
}

/// The nodes `n`'s value (a density, for a random choice) is computed from: a compound or mem application's output
/// takes its requested family's value (its operands reach that family through lookups, followed there), a branch's
/// output its predicate's and the family of the branch taken, which may be either.
template <class F>
void for_each_value_parent(const BranchReads& branch_reads, Node* n, F&& f) {
  if (n->kind == NodeKind::kOutput) {
    OutputNode* out = as_output(n);
    if (is_procedure(out->op->value) && std::get<ProcPtr>(out->op->value)->kind() != Procedure::Kind::kPrimitive) {
      f(out->op);
      if (std::get<ProcPtr>(out->op->value)->kind() == Procedure::Kind::kBranch && !out->operands.empty())
        f(out->operands[0]);
      for (Node* e : out->esr_parents) f(e);
      if (const std::vector<Node*>* more = branch_reads.find(n))
        for (Node* p : *more) f(p);
      return;
    }
  }
  for_each_read(branch_reads, n, f);
}

/// Whether a node has a density a regeneration or detach adds to the weight: a primitive application or a plate.
bool has_density(Node* n) {
  if (n->kind == NodeKind::kPlate) return true;
  return n->kind == NodeKind::kOutput && primitive_at(as_output(n)) != nullptr;
}

/// Whether evaluating `e` in `env` draws nothing and makes nothing but values: constants, variables, `if`s and
/// applications of primitive procedures that are not random (a forced regeneration then makes the same brush on any
/// path); the resampling nodes its variables name go to `reads`.
class PureBranch {
 public:
  PureBranch(Trace& t, const Scaffold& s, std::vector<Node*>& reads) : t_(t), s_(s), reads_(reads) {}

  bool operator()(const Expr* e, const Env* env, int depth = 0) {
    if (depth > 64) return false;  // not worth following further
    switch (e->kind) {
      case Expr::Kind::kConst: return true;
      case Expr::Kind::kVar: {
        Node* n = resolve(e->name, env);
        if (n != nullptr && s_.is_resampling(n)) reads_.push_back(n);
        return n != nullptr || t_.builtin(e->name) != nullptr;
      }
      case Expr::Kind::kLambda: return false;  // a procedure value, which whoever applies it would follow
      case Expr::Kind::kIf:
        for (const auto& item : e->items)
          if (!(*this)(item.get(), env, depth + 1)) return false;
        return true;
      case Expr::Kind::kApp: {
        const Expr* op = e->items[0].get();
        if (op->kind != Expr::Kind::kVar) return false;
        const Value* v = nullptr;
        if (Node* n = resolve(op->name, env)) {
          if (s_.is_resampling(n)) return false;  // the procedure itself may change
          v = &n->value;
        } else {
          v = t_.builtin(op->name);
        }
        if (v == nullptr || !is_procedure(*v)) return false;
        const Procedure& p = *std::get<ProcPtr>(*v);
        if (p.kind() != Procedure::Kind::kPrimitive || static_cast<const SpProcedure&>(p).sp().is_random())
          return false;
        for (size_t i = 1; i < e->items.size(); ++i)
          if (!(*this)(e->items[i].get(), env, depth + 1)) return false;
        return true;
      }
    }
    return false;
  }

 private:
  Node* resolve(const std::string& name, const Env* env) const {
    Node* n = env != nullptr ? env->find(name) : nullptr;
    return n != nullptr ? n : t_.global(name);
  }

  Trace& t_;
  const Scaffold& s_;
  std::vector<Node*>& reads_;
};

/// The group whose walk regenerates each resampling node first (regen goes from a border node up through the
/// resampling nodes it reads not yet in place), and each border node's group.
FlatPtrMap<Node, size_t> first_walks(const Scaffold& s, std::span<const std::vector<Node*>> borders,
                                     const BranchReads& branch_reads) {
  FlatPtrMap<Node, size_t> walk;
  std::vector<Node*> stack;
  for (size_t g = 0; g < borders.size(); ++g)
    for (Node* b : borders[g]) {
      stack.push_back(b);
      while (!stack.empty()) {
        Node* n = stack.back();
        stack.pop_back();
        if (!walk.emplace(n, g)) continue;
        for_each_read(branch_reads, n, [&](Node* p) {
          if (s.is_resampling(p) && !walk.contains(p)) stack.push_back(p);
        });
      }
    }
  return walk;
}

}  // namespace

std::optional<ForcedByGroup> plan_ancestor_sampling(Trace& trace, const Scaffold& s,
                                                    std::span<const std::vector<Node*>> borders,
                                                    std::span<const std::vector<Node*>> principals) {
  if (borders.size() < 2) return std::nullopt;
  FlatPtrSet<Node> principal;
  for (const std::vector<Node*>& g : principals)
    for (Node* n : g) principal.insert(n);
  // A forced regen must make nothing random but the principals: no request but an `if`'s with pure branches (its
  // brush made the same again), no other random choice, no observation made again.
  bool forced_is_exact = true;
  BranchReads branch_reads;
  s.drg.for_each([&](Node* n, int) {
    if (n->observation_root) forced_is_exact = false;
    if (n->kind == NodeKind::kRequest && forced_is_exact) {
      OutputNode* out = as_request(n)->output;
      const bool branch = !s.is_resampling(out->op) && is_procedure(out->op->value) &&
                          std::get<ProcPtr>(out->op->value)->kind() == Procedure::Kind::kBranch &&
                          out->expr != nullptr && out->expr->items.size() == 3;
      std::vector<Node*>& reads = branch_reads[out];
      PureBranch pure(trace, s, reads);
      if (!branch || !pure(out->expr->items[1].get(), out->env.get()) ||
          !pure(out->expr->items[2].get(), out->env.get()))
        forced_is_exact = false;
    }
    if (n->kind == NodeKind::kOutput && !principal.contains(n))
      if (const SpProcedure* p = primitive_at(as_output(n)); p != nullptr && p->sp().is_random())
        forced_is_exact = false;
  });
  if (!forced_is_exact) return std::nullopt;
  // Applications of a made SP with state (a collapsed coin's counts, a CRP's tables) are coupled through it: each
  // one's density reads every other one present, so a later group's record would not survive a change of ancestor.
  bool coupled = false;
  auto stateful = [&](Node* n) {
    if (n->kind != NodeKind::kOutput) return;
    const SpProcedure* p = primitive_at(as_output(n));
    if (p != nullptr && p->aux() != nullptr) coupled = true;
  };
  s.drg.for_each([&](Node* n, int) { stateful(n); });
  for (const std::vector<Node*>& group : borders)
    for (Node* b : group) stateful(b);
  if (coupled) return std::nullopt;

  const FlatPtrMap<Node, size_t> walk = first_walks(s, borders, branch_reads);
  // reads[n]: the earliest walk whose principals' values n's value is computed from (a principal: its own walk).
  FlatPtrMap<Node, size_t> reads;
  auto parents_read = [&](Node* n) {
    size_t r = kNothing;
    for_each_value_parent(branch_reads, n, [&](Node* p) {
      if (const size_t* q = reads.find(p)) r = std::min(r, *q);
    });
    return r;
  };
  std::vector<std::pair<Node*, bool>> stack;  // (node, parents done)
  bool order_one = true;
  auto check = [&](Node* n, size_t r) {  // what n's value or density reads, against the walk that computes it
    if (r != kNothing && r + 1 < *walk.find(n)) order_one = false;
  };
  for (const std::vector<Node*>& group : borders)
    for (Node* b : group) {
      stack.emplace_back(b, false);
      while (!stack.empty() && order_one) {
        auto [n, parents_done] = stack.back();
        stack.pop_back();
        if (parents_done) {
          const size_t r = parents_read(n);
          // A principal's density, a deterministic value (kept in a later group's record), an absorbing density.
          if (s.is_resampling(n) || has_density(n)) check(n, r);
          if (s.is_resampling(n)) reads[n] = principal.contains(n) ? *walk.find(n) : r;
          continue;
        }
        if (reads.contains(n)) continue;
        stack.emplace_back(n, true);
        for_each_read(branch_reads, n, [&](Node* p) {
          if (s.is_resampling(p) && !reads.contains(p)) stack.emplace_back(p, false);
        });
      }
      if (!order_one) return std::nullopt;
    }
  ForcedByGroup forced(borders.size());
  for (const std::vector<Node*>& g : principals)
    for (Node* n : g) forced[*walk.find(n)].push_back(n);
  return forced;
}

}  // namespace vnt
