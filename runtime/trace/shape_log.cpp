// SPDX-License-Identifier: Apache-2.0
#include "runtime/trace/shape_log.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/trace/node.hpp"

namespace vnt {

bool ShapeLog::kept_old(uint64_t epoch, uint64_t now, uint64_t made_from, std::span<const uint64_t> borders) const {
  const auto events = since(epoch, now);
  if (!events) return false;
  auto is_border = [&](uint64_t seq) { return std::find(borders.begin(), borders.end(), seq) != borders.end(); };
  using K = ShapeEvent::Kind;
  std::vector<std::pair<uint64_t, uint64_t>> open;  // edges made from an old node to a new one, not yet removed
  for (const ShapeEvent& e : *events) {
    const bool edge = e.kind == K::kAdd || e.kind == K::kRemove;
    if (e.kind == K::kDirective || (e.kind == K::kObserved && e.parent >= made_from) ||
        (edge && (e.parent >= made_from || (is_border(e.parent) ? e.child >= made_from : e.parent_constant))))
      continue;
    if (!edge || e.child < made_from) return false;
    const std::pair<uint64_t, uint64_t> pe{e.parent, e.child};
    if (e.kind == K::kAdd) {
      open.push_back(pe);
      continue;
    }
    const auto it = std::find(open.begin(), open.end(), pe);
    if (it == open.end()) return false;
    open.erase(it);
  }
  return open.empty();
}

std::optional<ShapeLog::Look> ShapeLog::sections_to_look_at(uint64_t epoch, uint64_t now, uint64_t made_from,
                                                           uint64_t border,
                                                           const std::function<bool(Node*)>& in_a_section) const {
  const auto events = since(epoch, now);
  if (!events) return std::nullopt;
  // The nodes deleted since `epoch`: a node an event of the window names was alive then, so no older deletion is of
  // it.
  std::vector<uint64_t> gone;
  for (auto it = deleted_.rbegin(); it != deleted_.rend() && it->first >= epoch; ++it) gone.push_back(it->second);
  std::sort(gone.begin(), gone.end());
  auto is_gone = [&](uint64_t seq) { return std::binary_search(gone.begin(), gone.end(), seq); };
  using K = ShapeEvent::Kind;
  struct Change {
    uint64_t parent, child;
    int sign;
    Node* parent_node;
  };
  std::vector<Change> changes;  // of edges from live old nodes in a section
  // How many times each child was linked under the border since and is still there: they are its last children.
  std::unordered_map<uint64_t, size_t> linked;
  // Old choices observed or no longer, once for each time (a rejected move's put back observes one again).
  std::vector<std::pair<uint64_t, Node*>> toggled;
  size_t linked_count = 0;
  for (const ShapeEvent& e : *events) {
    if (e.kind == K::kDirective) continue;
    if (e.kind == K::kObserved) {
      if (e.parent < made_from && !is_gone(e.parent)) toggled.emplace_back(e.parent, e.parent_node);
      continue;
    }
    if (e.kind == K::kOther) return std::nullopt;
    if (is_gone(e.parent) || is_gone(e.child)) continue;
    if (e.parent == border) {
      if (e.child_node != nullptr && e.child_node->kind == NodeKind::kPlate) continue;  // first, and never looked at
      if (e.kind == K::kAdd) {
        ++linked[e.child];
        ++linked_count;
      } else if (const auto it = linked.find(e.child); it != linked.end() && it->second > 0) {
        --it->second;  // one linked since goes again (a child there before the look leaves nothing to count)
        --linked_count;
      }
      continue;
    }
    if (e.parent >= made_from || e.parent_constant || !in_a_section(e.parent_node)) continue;
    changes.push_back({e.parent, e.child, e.kind == K::kAdd ? 1 : -1, e.parent_node});
  }
  std::sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) {
    return a.parent != b.parent ? a.parent < b.parent : a.child < b.child;
  });
  Look look{linked_count, {}};
  // A choice observed now and not then, or the other way, changed the sections it is in.
  std::sort(toggled.begin(), toggled.end());
  for (size_t i = 0; i < toggled.size();) {
    size_t j = i;
    while (j < toggled.size() && toggled[j].first == toggled[i].first) ++j;
    if ((j - i) % 2 == 1) look.touched.push_back(toggled[i].second);
    i = j;
  }
  for (size_t i = 0; i < changes.size();) {
    int net = 0;
    size_t j = i;
    for (; j < changes.size() && changes[j].parent == changes[i].parent && changes[j].child == changes[i].child; ++j)
      net += changes[j].sign;
    // Sorted by parent: a node that gained several children is named once.
    if (net > 0 && (look.touched.empty() || look.touched.back() != changes[i].parent_node))
      look.touched.push_back(changes[i].parent_node);
    i = j;
  }
  return look;
}

}  // namespace vnt
