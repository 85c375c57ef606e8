// find_border: the border of a principal node (Def. 6) and its N local sections, found without visiting them.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/infer/find_border.hpp"

#include <algorithm>
#include <array>

#include "runtime/scaffold/scaffold.hpp"
#include "runtime/trace/node.hpp"

namespace vnt {
namespace {

/// Whether child c of `parent` is in D: it cannot absorb the change of parent's value, directly or through its
/// request (an `if` or a procedure chosen by the value).
bool in_d(Node* parent, Node* c) {
  static const Scaffold none;
  if (!can_absorb_change(none, c, parent)) return true;
  if (c->kind != NodeKind::kOutput) return false;
  RequestNode* r = as_output(c)->request;
  for (Node* x : parent->children)
    if (x == r && !can_absorb_change(none, r, parent)) return true;
  return false;
}

/// n's one child that is not a request (nullptr if it has none or several, or plate rows).
Node* only_branch(Node* n, size_t& examined) {
  if (n->plate_children > 0 || n->children.size() - n->request_children != 1) return nullptr;
  for (Node* c : n->children) {
    ++examined;
    if (c->kind != NodeKind::kRequest) return c;
  }
  return nullptr;
}

/// Where a few branches of D below `cur` meet again before anything else branches off them, as the two lookups
/// of s in (* s s) meet at the product: the node every branch reaches following its one child in D. The nodes
/// before it are then global, and it is where the border search goes on. nullptr if the branches do not meet
/// within a few nodes (the search stays O(1)).
Node* rejoin(Node* cur, size_t branches, size_t& examined) {
  constexpr size_t kBranches = 8, kDepth = 8;
  if (branches > kBranches || cur->plate_children > 0 || cur->request_children > 0) return nullptr;
  std::array<std::array<Node*, kDepth>, kBranches> paths{};
  std::array<size_t, kBranches> lengths{};
  size_t b = 0;
  for (Node* c : cur->children) {
    ++examined;
    if (c->kind == NodeKind::kRequest) continue;
    if (!in_d(cur, c)) return nullptr;  // a branch absorbs the change: cur's sections are real
    Node* n = c;
    paths[b][lengths[b]++] = n;
    while (lengths[b] < kDepth) {
      Node* next = only_branch(n, examined);
      if (next == nullptr || !in_d(n, next)) break;
      paths[b][lengths[b]++] = n = next;
    }
    ++b;
  }
  auto on = [&](size_t i, Node* x) {
    return std::find(paths[i].begin(), paths[i].begin() + static_cast<std::ptrdiff_t>(lengths[i]), x) !=
           paths[i].begin() + static_cast<std::ptrdiff_t>(lengths[i]);
  };
  for (size_t k = 0; k < lengths[0]; ++k) {
    bool everywhere = true;
    for (size_t i = 1; i < b && everywhere; ++i) everywhere = on(i, paths[0][k]);
    if (everywhere) return paths[0][k];
  }
  return nullptr;
}

}  // namespace

BorderInfo find_border(Node* v) {
  Node* cur = v;
  size_t examined = 0;
  while (true) {
    ++examined;
    size_t branches = cur->children.size() - cur->request_children - cur->plate_children;
    size_t sections = branches + plate_rows(cur);  // each plate row is a local section
    if (sections >= 2) {
      if (Node* x = plate_rows(cur) == 0 ? rejoin(cur, branches, examined) : nullptr) {
        cur = x;
        continue;
      }
      if (cur->request_children > 0)
        return {nullptr, 0, "the node with several branches is also an argument of a procedure call", examined};
      return {cur, sections, {}, examined};
    }
    if (branches == 0) return {nullptr, 0, {}, examined};  // nothing below, or one plate row: N <= 1
    Node* next = nullptr;
    for (Node* c : cur->children) {  // at most one branch and its requests
      ++examined;
      if (c->kind != NodeKind::kRequest) next = c;
    }
    if (!in_d(cur, next)) return {nullptr, 0, {}, examined};  // D ends before any branching: N <= 1
    cur = next;
  }
}

}  // namespace vnt
