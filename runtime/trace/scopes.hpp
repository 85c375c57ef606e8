// Inference scopes: (scope_include 'scope block expr) registers the tagged node under (scope, block).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/trace/samplable_set.hpp"
#include "runtime/value/value.hpp"

namespace vnt {

struct Node;

/// The blocks of one scope, each with the nodes tagged into it (in tagging order).
class Scope {
 public:
  void add(const Value& block, Node* node);
  void remove(const Value& block, Node* node);
  const SamplableSet<Value, ValueHash, ValueEqual>& blocks() const { return blocks_; }
  const std::vector<Node*>* nodes(const Value& block) const;

 private:
  SamplableSet<Value, ValueHash, ValueEqual> blocks_;
  std::unordered_map<Value, std::vector<Node*>, ValueHash, ValueEqual> nodes_;
};

class ScopeTable {
 public:
  void add(const std::string& scope, const Value& block, Node* node) { scopes_[scope].add(block, node); }
  void remove(const std::string& scope, const Value& block, Node* node);
  const Scope* find(const std::string& scope) const;

 private:
  std::unordered_map<std::string, Scope> scopes_;
};

}  // namespace vnt
