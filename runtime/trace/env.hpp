// Lexical environments map names to trace nodes (not values), so a change flows through lookup edges.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vnt {

struct Node;
class Env;
using EnvPtr = std::shared_ptr<const Env>;

/// A frame of bindings with a parent. The global frame is the trace's own table (parent == nullptr ends the chain).
class Env {
 public:
  Env(EnvPtr parent, std::vector<std::pair<std::string, Node*>> bindings)
      : parent_(std::move(parent)), bindings_(std::move(bindings)) {}

  /// The node bound to `name` in this frame or an enclosing one, or nullptr.
  Node* find(std::string_view name) const {
    for (const Env* e = this; e != nullptr; e = e->parent_.get())
      for (const auto& [k, n] : e->bindings_)
        if (k == name) return n;
    return nullptr;
  }

 private:
  EnvPtr parent_;
  std::vector<std::pair<std::string, Node*>> bindings_;
};

}  // namespace vnt
