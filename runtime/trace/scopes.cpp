// Scope and block bookkeeping.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/trace/scopes.hpp"

#include <algorithm>

namespace vnt {

void Scope::add(const Value& block, Node* node) {
  nodes_[block].push_back(node);
  blocks_.insert(block);
  if (recording_) log_.push_back({block, node, kAdded});
}

void Scope::remove(const Value& block, Node* node) {
  auto it = nodes_.find(block);
  VNT_ASSERT(it != nodes_.end(), "scope block missing on removal");
  auto& v = it->second;
  auto pos = std::find(v.rbegin(), v.rend(), node);
  VNT_ASSERT(pos != v.rend(), "scope member missing on removal");
  auto at = std::next(pos).base();
  if (recording_) log_.push_back({block, node, static_cast<size_t>(at - v.begin())});
  v.erase(at);
  if (v.empty()) {
    nodes_.erase(it);
    blocks_.erase(block);
  }
}

void Scope::record(bool on) {
  recording_ = on;
  log_.clear();
  blocks_.record(on);
}

void Scope::rollback() {
  blocks_.rollback();
  for (auto c = log_.rbegin(); c != log_.rend(); ++c) {
    auto& v = nodes_[c->block];
    if (c->was_at == kAdded) {
      VNT_ASSERT(!v.empty() && v.back() == c->node, "scope: undoing additions out of order");
      v.pop_back();
      if (v.empty()) nodes_.erase(c->block);
    } else {
      v.insert(v.begin() + static_cast<std::ptrdiff_t>(c->was_at), c->node);
    }
  }
  log_.clear();
}

const std::vector<Node*>* Scope::nodes(const Value& block) const {
  auto it = nodes_.find(block);
  return it == nodes_.end() ? nullptr : &it->second;
}

void ScopeTable::add(const std::string& scope, const Value& block, Node* node) {
  auto [it, fresh] = scopes_.try_emplace(scope);
  if (fresh && recording_) it->second.record(true);
  it->second.add(block, node);
}

void ScopeTable::remove(const std::string& scope, const Value& block, Node* node) {
  auto it = scopes_.find(scope);
  VNT_ASSERT(it != scopes_.end(), "scope '{}' missing on removal", scope);
  it->second.remove(block, node);
  if (!recording_ && it->second.blocks().empty()) scopes_.erase(it);
}

void ScopeTable::record(bool on) {
  recording_ = on;
  for (auto& [name, scope] : scopes_) scope.record(on);
  if (!on) drop_empty();
}

void ScopeTable::rollback() {
  for (auto& [name, scope] : scopes_) scope.rollback();
  drop_empty();  // scopes made by the rolled-back changes
}

void ScopeTable::drop_empty() {
  std::erase_if(scopes_, [](const auto& kv) { return kv.second.blocks().empty(); });
}

const Scope* ScopeTable::find(const std::string& scope) const {
  auto it = scopes_.find(scope);
  return it == scopes_.end() ? nullptr : &it->second;
}

}  // namespace vnt
