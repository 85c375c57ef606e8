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
  const SamplableSet<Value, KeyHash, KeyEqual>& blocks() const { return blocks_; }
  const std::vector<Node*>* nodes(const Value& block) const;

  /// As SamplableSet::record/rollback, for the blocks and the order of their nodes.
  void record(bool on);
  void rollback();

 private:
  struct Change {
    Value block;
    Node* node;
    size_t was_at;  // where a removed node was in its block, or kAdded
  };
  static constexpr size_t kAdded = static_cast<size_t>(-1);

  SamplableSet<Value, KeyHash, KeyEqual> blocks_;
  std::unordered_map<Value, std::vector<Node*>, KeyHash, KeyEqual> nodes_;
  bool recording_ = false;
  std::vector<Change> log_;
};

class ScopeTable {
 public:
  void add(const std::string& scope, const Value& block, Node* node);
  void remove(const std::string& scope, const Value& block, Node* node);
  const Scope* find(const std::string& scope) const;

  /// While recording (a directive's transaction), rollback() restores every scope, block and order as when
  /// recording began. Scopes left empty are kept until then, so their logs survive.
  void record(bool on);
  void rollback();

 private:
  void drop_empty();

  std::unordered_map<std::string, Scope> scopes_;
  bool recording_ = false;
};

}  // namespace vnt
