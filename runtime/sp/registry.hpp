// The table of builtin SPs a runtime starts with; the embedding API adds custom SPs through it too.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/sp/sp.hpp"

namespace vnt {

class SpRegistry {
 public:
  /// Registers `sp` under its name (and optional aliases). Throws kInternal on a duplicate name.
  void add(std::shared_ptr<const Sp> sp, std::vector<std::string> aliases = {});
  /// Registers an arbitrary constant value under a name (e.g. `pi`).
  void add_value(std::string name, Value v);
  /// The value bound to `name`, or nullptr.
  const Value* find(std::string_view name) const;
  std::vector<std::string> names() const;

 private:
  std::map<std::string, Value, std::less<>> table_;
};

/// Fills a registry with every builtin of stdlib/ (generated from the files present at configure time).
void register_stdlib(SpRegistry& r);

}  // namespace vnt
