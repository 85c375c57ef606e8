// Nodes of a probabilistic execution trace (PET): constants, lookups, and request/output pairs.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "runtime/trace/child_list.hpp"
#include "runtime/trace/env.hpp"
#include "runtime/value/value.hpp"

namespace vnt {

struct Expr;
struct OutputNode;

enum class NodeKind : uint8_t { kConstant, kLookup, kRequest, kOutput, kPlate };

/// Common part. The trace owns nodes; edges are plain pointers. Children lists hold every node that reads
/// this one (lookups, applications using it as operator/operand, outputs using it as an ESR parent).
struct Node {
  Node(NodeKind k, const Expr* e) : kind(k), expr(e) {}

  NodeKind kind;
  bool constrained = false;      // an observed random choice: its value is fixed data
  bool observation_root = false; // the root of an observe directive
  bool border = false;           // has taken a border version: an accepted subsampled move went through it
  uint32_t num_requests = 0;     // when this node is a family root: how many ESR edges point at it
  uint32_t request_children = 0; // how many children are request nodes (so other children are counted in O(1))
  uint32_t plate_children = 0;   // how many children are plates (kept first in `children`; see plate.hpp)
  uint64_t version = 0;          // of a border: new for each accepted subsampled move; of a local section's
                                 // root: the border version its values were computed from (stale if older)
  uint64_t seq = 0;              // creation order in its trace: where a walk visits nodes in the order of a table
                                 // keyed by address, this order keeps runs reproducible (by_creation)
  Value value;
  const Expr* expr;              // source of the span in messages; may be null for synthesized nodes
  ChildList children;
};

/// Sorts nodes by creation (Node::seq): a deterministic order for nodes gathered from tables keyed by address.
inline void by_creation(std::span<Node*> nodes) {
  std::sort(nodes.begin(), nodes.end(), [](const Node* a, const Node* b) { return a->seq < b->seq; });
}

struct ConstantNode : Node {
  ConstantNode(const Expr* e, Value v) : Node(NodeKind::kConstant, e) { value = std::move(v); }
};

struct LookupNode : Node {
  LookupNode(const Expr* e, Node* src) : Node(NodeKind::kLookup, e), source(src) {}
  Node* source;
};

/// One exposed simulation request: evaluate `expr` in `env` as a family keyed by `key` (or, for mem,
/// apply `proc` to `args`). Families with an own key (compound procedures, `if`) belong to one request node.
struct Esr {
  bool shared = false;        // mem: the family is shared by equal keys
  Value key;                  // mem: the argument list (a ListPtr), which the memoized procedure is applied to
  const Expr* expr = nullptr; // compound/if: the expression to evaluate
  EnvPtr env;
  Value proc;                 // mem: the memoized procedure
};

struct RequestNode : Node {
  RequestNode(const Expr* e, OutputNode* out) : Node(NodeKind::kRequest, e), output(out) {}
  OutputNode* output;
  std::vector<Esr> esrs;          // the request (empty for primitive SPs)
  Node* own_family = nullptr;     // the root of the family owned by this request (compound, if)
};

struct OutputNode : Node {
  OutputNode(const Expr* e, Node* op_node, std::vector<Node*> operand_nodes, EnvPtr app_env)
      : Node(NodeKind::kOutput, e), op(op_node), operands(std::move(operand_nodes)), env(std::move(app_env)) {}
  Node* op;
  std::vector<Node*> operands;
  RequestNode* request = nullptr;
  std::vector<Node*> esr_parents;
  EnvPtr env;  // where the application was evaluated (`if` evaluates its branch here)
};

inline LookupNode* as_lookup(Node* n) { return static_cast<LookupNode*>(n); }
inline RequestNode* as_request(Node* n) { return static_cast<RequestNode*>(n); }
inline OutputNode* as_output(Node* n) { return static_cast<OutputNode*>(n); }

}  // namespace vnt
