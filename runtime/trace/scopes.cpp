// Scope and block bookkeeping.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/trace/scopes.hpp"

#include <algorithm>

namespace vnt {

void Scope::add(const Value& block, Node* node) {
  nodes_[block].push_back(node);
  blocks_.insert(block);
}

void Scope::remove(const Value& block, Node* node) {
  auto it = nodes_.find(block);
  VNT_ASSERT(it != nodes_.end(), "scope block missing on removal");
  auto& v = it->second;
  auto pos = std::find(v.rbegin(), v.rend(), node);
  VNT_ASSERT(pos != v.rend(), "scope member missing on removal");
  v.erase(std::next(pos).base());
  if (v.empty()) {
    nodes_.erase(it);
    blocks_.erase(block);
  }
}

const std::vector<Node*>* Scope::nodes(const Value& block) const {
  auto it = nodes_.find(block);
  return it == nodes_.end() ? nullptr : &it->second;
}

void ScopeTable::remove(const std::string& scope, const Value& block, Node* node) {
  auto it = scopes_.find(scope);
  VNT_ASSERT(it != scopes_.end(), "scope '{}' missing on removal", scope);
  it->second.remove(block, node);
  if (it->second.blocks().empty()) scopes_.erase(it);
}

const Scope* ScopeTable::find(const std::string& scope) const {
  auto it = scopes_.find(scope);
  return it == scopes_.end() ? nullptr : &it->second;
}

}  // namespace vnt
