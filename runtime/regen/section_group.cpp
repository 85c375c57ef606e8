// Grouping the children of a border whose branches meet into one local section (see section_group.hpp).
// SPDX-License-Identifier: Apache-2.0
#include "runtime/regen/section_group.hpp"

#include <algorithm>

#include "runtime/regen/border_reach.hpp"
#include "runtime/regen/walk.hpp"

namespace vnt {
namespace {

bool has(const std::vector<Node*>& v, Node* n) { return std::find(v.begin(), v.end(), n) != v.end(); }

size_t size_of(const Scaffold& s) { return s.drg.size() + s.absorbing.size(); }

/// Whether the value of `q` may stay when one of its parents changes: a random choice (which absorbs it), or the
/// output of a compound, mem or `if` application (whose value is its family's, not its operands').
bool may_absorb(Node* q) {
  if (q->kind != NodeKind::kOutput || !is_procedure(as_output(q)->op->value)) return false;
  const SpProcedure* p = primitive_at(as_output(q));
  return p == nullptr || p->sp().is_random();
}

/// Adds to `roots` the children of the border that `p` (a node following the border) is computed from, and whose
/// change reaches it: one whose change is absorbed on the way (the argument of (f w) when f's body only passes it to
/// a random choice) does not make `p` move, and its own section, built from it, never meets this one. Only where a
/// node on the way may absorb is that asked of each root's scaffold.
void add_roots_above(Trace& trace, BorderReach& reach, Node* p, std::vector<Node*>& roots) {
  std::vector<Node*> todo{p}, seen, found;
  bool absorbing = false;
  while (!todo.empty()) {
    Node* q = todo.back();
    todo.pop_back();
    if (has(seen, q)) continue;
    seen.push_back(q);
    absorbing |= may_absorb(q);
    bool root = false;
    for_each_parent(q, [&](Node* x) { root |= x == reach.border(); });
    if (root) {
      if (!has(roots, q)) found.push_back(q);
      continue;  // its other reads are found with its section
    }
    for_each_parent(q, [&](Node* x) {
      if (reach.follows(x)) todo.push_back(x);
    });
  }
  for (Node* q : found) {
    if (absorbing) {
      const std::optional<Scaffold> s = build_local_scaffold(trace, reach.border(), std::span<Node* const>(&q, 1),
                                                             kMaxSectionNodesPerRoot);
      if (s && !s->is_resampling(p)) continue;  // too large to tell: grouped, as before
    }
    roots.push_back(q);
  }
}

}  // namespace

std::optional<SectionGroup> section_group(Trace& trace, BorderReach& reach, Node* root) {
  Node* border = reach.border();
  SectionGroup g{{root}, build_local_scaffold(trace, border, root)};
  const size_t per_root = std::max(kMaxSectionNodesPerRoot, size_of(g.scaffold));
  for (;;) {
    const size_t found = g.roots.size();
    // A node of the section that reads a value following the border, other than through the section itself,
    // reads another child's branch: that child belongs to the section too. Its requested families count: the
    // output of (f w) reads the body of f, which may read w again (through its own lookup, a child of the border).
    // Not a family the section's regen removes (its brush): what that read goes with it.
    auto other_reads = [&](Node* n) {
      for_each_parent(n, [&](Node* p) {
        if (p == border || g.scaffold.is_resampling(p) || g.scaffold.is_absorbing(p) || g.scaffold.is_brush(p))
          return;
        if (p->kind == NodeKind::kRequest && as_request(p)->output == n) return;  // n's own request
        if (reach.follows(p)) add_roots_above(trace, reach, p, g.roots);
      });
    };
    g.scaffold.drg.for_each([&](Node* n, int) { other_reads(n); });
    g.scaffold.absorbing.for_each(other_reads);
    if (g.roots.size() == found) return g;
    by_creation(std::span<Node*>(g.roots).subspan(found));  // found in the order of the tables: by address
    if (g.roots.size() > kMaxSectionRoots) return std::nullopt;
    std::optional<Scaffold> s = build_local_scaffold(trace, border, g.roots, per_root * g.roots.size());
    if (!s) return std::nullopt;
    g.scaffold = std::move(*s);
  }
}

}  // namespace vnt
