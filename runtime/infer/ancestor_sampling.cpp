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
#include "runtime/trace/node.hpp"

namespace vnt {
namespace {

constexpr size_t kNothing = SIZE_MAX;  // a value computed from no principal

/// The group whose walk regenerates each resampling node first (regen goes from a border node up through the
/// resampling parents not yet in place), and each border node's group.
FlatPtrMap<Node, size_t> first_walks(const Scaffold& s, std::span<const std::vector<Node*>> borders) {
  FlatPtrMap<Node, size_t> walk;
  std::vector<Node*> stack;
  for (size_t g = 0; g < borders.size(); ++g)
    for (Node* b : borders[g]) {
      stack.push_back(b);
      while (!stack.empty()) {
        Node* n = stack.back();
        stack.pop_back();
        if (!walk.emplace(n, g)) continue;
        for_each_parent(n, [&](Node* p) {
          if (s.is_resampling(p) && !walk.contains(p)) stack.push_back(p);
        });
      }
    }
  return walk;
}

}  // namespace

std::optional<ForcedByGroup> plan_ancestor_sampling(const Scaffold& s, std::span<const std::vector<Node*>> borders,
                                                    std::span<const std::vector<Node*>> principals) {
  if (borders.size() < 2) return std::nullopt;
  FlatPtrSet<Node> principal;
  for (const std::vector<Node*>& g : principals)
    for (Node* n : g) principal.insert(n);
  // A forced regen must make nothing random but the principals: no request (brush), no other random choice, no
  // observation made again.
  bool forced_is_exact = true;
  s.drg.for_each([&](Node* n, int) {
    if (n->kind == NodeKind::kRequest || n->observation_root) forced_is_exact = false;
    if (n->kind == NodeKind::kOutput && !principal.contains(n))
      if (const SpProcedure* p = primitive_at(as_output(n)); p != nullptr && p->sp().is_random())
        forced_is_exact = false;
  });
  if (!forced_is_exact) return std::nullopt;

  const FlatPtrMap<Node, size_t> walk = first_walks(s, borders);
  // reads[n]: the earliest walk whose principals' values n's value is computed from (a principal: its own walk).
  FlatPtrMap<Node, size_t> reads;
  auto parents_read = [&](Node* n) {
    size_t r = kNothing;
    for_each_parent(n, [&](Node* p) {
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
          check(n, r);  // a principal's density, a deterministic value, an absorbing node's density
          if (s.is_resampling(n)) reads[n] = principal.contains(n) ? *walk.find(n) : r;
          continue;
        }
        if (reads.contains(n)) continue;
        stack.emplace_back(n, true);
        for_each_parent(n, [&](Node* p) {
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
