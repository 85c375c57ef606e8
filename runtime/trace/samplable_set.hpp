// A set with O(1) insert, erase and uniform sampling (blocks of `one`, random choices of `default`).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <unordered_map>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/core/flat_ptr_map.hpp"
#include "runtime/core/make_room.hpp"

namespace vnt {

namespace detail {

/// Where each item of a SamplableSet is: a hash map.
template <class T, class Hash, class Eq>
class SamplableIndex {
 public:
  const size_t* find(const T& x) const {
    auto it = map_.find(x);
    return it == map_.end() ? nullptr : &it->second;
  }
  void set(const T& x, size_t i) { map_[x] = i; }
  void erase(const T& x) { map_.erase(x); }

 private:
  std::unordered_map<T, size_t, Hash, Eq> map_;
};

/// For pointers, a flat table: the trace's random choices leave and join the set at every regeneration of a choice,
/// which cost a hash node's allocation and release each time.
template <class N>
class SamplableIndex<N*, std::hash<N*>, std::equal_to<N*>> {
 public:
  const size_t* find(const N* x) const { return map_.find(x); }
  void set(N* x, size_t i) { map_[x] = i; }
  void erase(const N* x) { map_.erase(x); }

 private:
  FlatPtrMap<N, size_t> map_;
};

}  // namespace detail

template <class T, class Hash = std::hash<T>, class Eq = std::equal_to<T>>
class SamplableSet {
 public:
  bool contains(const T& x) const { return index_.find(x) != nullptr; }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const std::vector<T>& items() const { return items_; }
  const T& at(size_t i) const { return items_[i]; }

  /// insert and erase either change the set or, out of memory, throw and leave it as it was: they allocate first.
  void insert(const T& x) {
    if (contains(x)) return;
    make_room(items_);
    if (recording_) make_room(log_);
    index_.set(x, items_.size());
    items_.push_back(x);
    if (recording_) log_.push_back({x, kInserted});
  }
  void erase(const T& x) {
    const size_t* at = index_.find(x);
    if (at == nullptr) return;
    if (recording_) make_room(log_);
    const size_t i = *at;
    index_.erase(x);
    if (i + 1 != items_.size()) {
      items_[i] = std::move(items_.back());
      index_.set(items_[i], i);  // present: no allocation
    }
    items_.pop_back();
    if (recording_) log_.push_back({x, i});
  }

  /// While recording, changes are logged, and rollback() puts back the items *in their order* as when recording
  /// began: a failed directive must not change which choice a later `one` draws. record(false) forgets the log.
  void record(bool on) {
    recording_ = on;
    log_.clear();
  }
  void rollback() {
    bool was = recording_;
    recording_ = false;
    for (auto c = log_.rbegin(); c != log_.rend(); ++c) {
      if (c->was_at == kInserted) {
        erase(c->item);  // the last item, since later changes are undone already
      } else {
        restore(c->item, c->was_at);
      }
    }
    log_.clear();
    recording_ = was;
  }

 private:
  static constexpr size_t kInserted = static_cast<size_t>(-1);
  struct Change {
    T item;
    size_t was_at;  // where an erased item was, or kInserted
  };

  // The inverse of an erase of x from position i, applied to the set as that erase left it.
  void restore(const T& x, size_t i) {
    VNT_ASSERT(i <= items_.size() && !contains(x), "samplable set: undoing changes out of order");
    if (i < items_.size()) {
      index_.set(items_[i], items_.size());
      items_.push_back(std::move(items_[i]));
      items_[i] = x;
    } else {
      items_.push_back(x);
    }
    index_.set(x, i);
  }

  std::vector<T> items_;
  detail::SamplableIndex<T, Hash, Eq> index_;
  bool recording_ = false;
  std::vector<Change> log_;
};

}  // namespace vnt
