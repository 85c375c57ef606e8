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
  /// A Db for taking a family apart for good (forget, the end of a sample): it saves nothing, so the teardown does
  /// not allocate for it, and cannot run out of memory half done. Detach destroys the requested families it would
  /// have held once they are un-evaluated.
  static Db discarding(Trace& trace) { return Db(trace, Discard{}); }
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  bool discards() const { return discards_; }
  /// Room for `n` saved values, so that a detach saving that many allocates nothing for them (an allocation that
  /// fails there, in Trace::must_complete, would leave the trace half detached).
  void reserve(size_t n) { values_.reserve(n); }
  size_t saved_values() const { return values_.size(); }
  void put_value(const Node* n, Value v) {
    if (!discards_) values_[const_cast<Node*>(n)] = std::move(v);
  }
  /// The saved value of `n`, or nullptr.
  const Value* value(const Node* n) const;
  /// Removes and returns the saved value of `n`; throws kInternal if there is none.
  Value take_value(const Node* n);

  void put_own_family(const RequestNode* r, Node* root) {
    if (!discards_) own_[r] = root;
  }
  Node* take_own_family(const RequestNode* r);
  void put_shared_family(const MemProcedure* m, const Value& key, Node* root);
  Node* take_shared_family(const MemProcedure* m, const Value& key);

 private:
  struct Discard {};
  Db(Trace& trace, Discard) : trace_(trace), discards_(true) {}

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
  bool discards_ = false;
  FlatPtrMap<Node, Value> values_;
  std::unordered_map<const RequestNode*, Node*> own_;
  std::unordered_map<SharedKey, Node*, SharedHash, SharedEq> shared_;
};

}  // namespace vnt
