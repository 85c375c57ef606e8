// A set with O(1) insert, erase and uniform sampling (blocks of `one`, random choices of `default`).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <unordered_map>
#include <vector>

#include "runtime/core/error.hpp"

namespace vnt {

template <class T, class Hash = std::hash<T>, class Eq = std::equal_to<T>>
class SamplableSet {
 public:
  bool contains(const T& x) const { return index_.find(x) != index_.end(); }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const std::vector<T>& items() const { return items_; }
  const T& at(size_t i) const { return items_[i]; }

  void insert(const T& x) {
    if (contains(x)) return;
    index_.emplace(x, items_.size());
    items_.push_back(x);
  }
  void erase(const T& x) {
    auto it = index_.find(x);
    if (it == index_.end()) return;
    size_t i = it->second;
    index_.erase(it);
    if (i + 1 != items_.size()) {
      items_[i] = std::move(items_.back());
      index_[items_[i]] = i;
    }
    items_.pop_back();
  }

 private:
  std::vector<T> items_;
  std::unordered_map<T, size_t, Hash, Eq> index_;
};

}  // namespace vnt
