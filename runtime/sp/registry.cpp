// Builtin name table.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/sp/registry.hpp"

#include "runtime/core/error.hpp"

namespace vnt {

void SpRegistry::add(std::shared_ptr<const Sp> sp, std::vector<std::string> aliases) {
  Value v = make_procedure(sp);
  aliases.insert(aliases.begin(), std::string(sp->name()));
  for (auto& name : aliases) {
    VNT_ASSERT(!table_.contains(name), "builtin '{}' registered twice", name);
    table_.emplace(std::move(name), v);
  }
}

void SpRegistry::add_value(std::string name, Value v) {
  VNT_ASSERT(!table_.contains(name), "builtin '{}' registered twice", name);
  table_.emplace(std::move(name), std::move(v));
}

const Value* SpRegistry::find(std::string_view name) const {
  auto it = table_.find(name);
  return it == table_.end() ? nullptr : &it->second;
}

std::vector<std::string> SpRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : table_) out.push_back(k);
  return out;
}

}  // namespace vnt
