// Walking a node's ancestry up to a border (see border_reach.hpp).
// SPDX-License-Identifier: Apache-2.0
#include "runtime/regen/border_reach.hpp"

#include "runtime/regen/walk.hpp"
#include "runtime/sp/sp.hpp"

namespace vnt {
namespace {

bool is_random_choice(Node* n) {
  if (n->kind != NodeKind::kOutput) return false;
  const SpProcedure* p = primitive_at(as_output(n));
  return p != nullptr && p->sp().is_random();
}

enum class Reach { kNo, kYes, kUnknown };

/// follows() for ancestries at most `depth` applications deep, without memory: what a section reads is mostly
/// data, a procedure, or a value built from constants (the (vector 1 2) of a datum); deeper ones are kUnknown.
Reach near(Node* x, Node* border, int depth) {
  while (x != border) {
    if (x->kind == NodeKind::kConstant || is_random_choice(x)) return Reach::kNo;
    if (x->kind != NodeKind::kLookup) break;
    x = as_lookup(x)->source;
  }
  if (x == border) return Reach::kYes;
  if (depth == 0) return Reach::kUnknown;
  Reach r = Reach::kNo;
  auto parent = [&](Node* p) {
    if (r == Reach::kYes) return;
    const Reach q = near(p, border, depth - 1);
    if (q != Reach::kNo) r = q;
  };
  if (x->kind == NodeKind::kOutput)
    for (Node* e : as_output(x)->esr_parents) parent(e);
  for_each_definite_parent(x, parent);
  return r;
}

}  // namespace

bool BorderReach::follows(Node* x) {
  constexpr int kNear = 3;
  if (const Reach r = near(x, border_, kNear); r != Reach::kUnknown) return r == Reach::kYes;
  if (const bool* known = memo_.find(x)) return *known;
  todo_.assign(1, x);
  FlatPtrSet<Node> seen;
  bool found = false;
  while (!todo_.empty() && !found) {
    Node* n = todo_.back();
    todo_.pop_back();
    if (n == border_) found = true;
    if (found || !seen.insert(n) || is_random_choice(n)) continue;
    if (n->kind == NodeKind::kOutput)
      for (Node* e : as_output(n)->esr_parents) todo_.push_back(e);
    for_each_definite_parent(n, [&](Node* p) { todo_.push_back(p); });
  }
  memo_.emplace(x, found);
  return found;
}

bool BorderReach::section_roots(Node* x, std::vector<Node*>& roots, size_t max_nodes) {
  const size_t had = roots.size();
  std::vector<Node*> todo{x};
  FlatPtrSet<Node> seen;
  seen.insert(x);
  while (!todo.empty()) {
    if (seen.size() > max_nodes) {
      roots.resize(had);
      return false;
    }
    Node* n = todo.back();
    todo.pop_back();
    bool root = false;
    for_each_parent(n, [&](Node* p) {
      if (p == border_) root = true;
      else if (p != nullptr && !seen.contains(p) && follows(p)) {
        seen.insert(p);
        todo.push_back(p);
      }
    });
    if (root) roots.push_back(n);
  }
  return true;
}

}  // namespace vnt
