// Saved state of detached scaffolds.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/regen/db.hpp"

#include "runtime/trace/trace.hpp"

namespace vnt {

Db::~Db() {
  for (auto& [r, root] : own_) trace_.destroy_family(root);
  for (auto& [k, root] : shared_) trace_.destroy_family(root);
}

const Value* Db::value(const Node* n) const { return values_.find(n); }

Value Db::take_value(const Node* n) {
  Value* saved = values_.find(n);
  VNT_ASSERT(saved != nullptr, "no saved value to restore");
  Value v = std::move(*saved);
  values_.erase(n);
  return v;
}

Node* Db::take_own_family(const RequestNode* r) {
  auto it = own_.find(r);
  if (it == own_.end()) return nullptr;
  Node* root = it->second;
  own_.erase(it);
  return root;
}

void Db::put_shared_family(const MemProcedure* m, const Value& key, Node* root) {
  if (!discards_) shared_[SharedKey{m, key}] = root;
}

Node* Db::take_shared_family(const MemProcedure* m, const Value& key) {
  auto it = shared_.find(SharedKey{m, key});
  if (it == shared_.end()) return nullptr;
  Node* root = it->second;
  shared_.erase(it);
  return root;
}

}  // namespace vnt
