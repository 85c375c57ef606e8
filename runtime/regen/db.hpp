// OmegaDB: what detach took out of the trace (old values, detached families), so a rejected proposal can be
// restored exactly. Families still held when the Db dies are deleted with it.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <unordered_map>
#include <utility>

#include "runtime/core/flat_ptr_map.hpp"
#include "runtime/trace/node.hpp"

namespace vnt {

class Trace;
class MemProcedure;

class Db {
 public:
  explicit Db(Trace& trace) : trace_(trace) {}
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  void put_value(const Node* n, Value v) { values_[const_cast<Node*>(n)] = std::move(v); }
  /// The saved value of `n`, or nullptr.
  const Value* value(const Node* n) const;
  /// Removes and returns the saved value of `n`; throws kInternal if there is none.
  Value take_value(const Node* n);

  void put_own_family(const RequestNode* r, Node* root) { own_[r] = root; }
  Node* take_own_family(const RequestNode* r);
  void put_shared_family(const MemProcedure* m, const Value& key, Node* root);
  Node* take_shared_family(const MemProcedure* m, const Value& key);

 private:
  struct SharedKey {
    const MemProcedure* mem;
    Value key;
  };
  struct SharedHash {
    size_t operator()(const SharedKey& k) const {
      return std::hash<const void*>()(k.mem) ^ (value_hash(k.key) * 31);
    }
  };
  struct SharedEq {
    bool operator()(const SharedKey& a, const SharedKey& b) const {
      return a.mem == b.mem && values_equal(a.key, b.key);
    }
  };

  Trace& trace_;
  FlatPtrMap<Node, Value> values_;
  std::unordered_map<const RequestNode*, Node*> own_;
  std::unordered_map<SharedKey, Node*, SharedHash, SharedEq> shared_;
};

}  // namespace vnt
