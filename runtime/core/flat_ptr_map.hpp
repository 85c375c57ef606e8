// Open-addressing hash map and set keyed by pointers: one probe sequence in one array, no allocation per
// entry. Scaffolds and Dbs hold one entry per node they touch, on the hot path of every transition.
// Iteration order depends on addresses: never let it decide anything observable (RNG use, output).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace vnt {

template <class K, class V>
class FlatPtrMap {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return slots_.size(); }  // slots, live or not
  bool contains(const K* k) const { return find(k) != nullptr; }

  V* find(const K* k) {
    if (slots_.empty()) return nullptr;
    for (size_t i = index(k);; i = (i + 1) & mask()) {
      Slot& s = slots_[i];
      if (s.key == k) return &s.value;
      if (s.key == nullptr) return nullptr;
    }
  }
  const V* find(const K* k) const { return const_cast<FlatPtrMap*>(this)->find(k); }

  /// Inserts (k, v) if k is absent; returns whether it inserted.
  bool emplace(K* k, V v) {
    if (find(k) != nullptr) return false;
    insert_new(k, std::move(v));
    return true;
  }
  V& operator[](K* k) {
    if (V* v = find(k)) return *v;
    return insert_new(k, V{});
  }
  bool erase(const K* k) {
    if (slots_.empty()) return false;
    for (size_t i = index(k);; i = (i + 1) & mask()) {
      Slot& s = slots_[i];
      if (s.key == k) {
        s.key = tombstone();
        s.value = V{};
        --size_;
        return true;
      }
      if (s.key == nullptr) return false;
    }
  }
  template <class F>
  void for_each(F&& f) {
    for (Slot& s : slots_)
      if (s.key != nullptr && s.key != tombstone()) f(s.key, s.value);
  }
  template <class F>
  void for_each(F&& f) const {
    for (const Slot& s : slots_)
      if (s.key != nullptr && s.key != tombstone()) f(s.key, s.value);
  }
  void reserve(size_t n) {
    if (n * 2 > slots_.size()) rehash(std::bit_ceil(n * 2 < 16 ? size_t{16} : n * 2));
  }
  /// Removes every entry and keeps the table (a map reused as scratch allocates nothing once grown).
  void clear() {
    if (used_ == 0) return;
    std::fill(slots_.begin(), slots_.end(), Slot{});
    size_ = used_ = 0;
  }

 private:
  struct Slot {
    K* key = nullptr;
    V value{};
  };
  static K* tombstone() { return reinterpret_cast<K*>(uintptr_t{1}); }
  size_t mask() const { return slots_.size() - 1; }
  size_t index(const K* k) const {
    auto h = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(k)) * 0x9E3779B97F4A7C15ULL;
    return static_cast<size_t>(h >> 32) & mask();
  }
  V& insert_new(K* k, V v) {
    if ((used_ + 1) * 4 > slots_.size() * 3) {
      // Too full (counting tombstones): grow if live entries need it, else just drop the tombstones.
      size_t n = slots_.empty() ? 16 : slots_.size();
      if ((size_ + 1) * 2 > n) n *= 2;
      rehash(n);
    }
    for (size_t i = index(k);; i = (i + 1) & mask()) {
      Slot& s = slots_[i];
      if (s.key == nullptr || s.key == tombstone()) {
        if (s.key == nullptr) ++used_;
        s.key = k;
        s.value = std::move(v);
        ++size_;
        return s.value;
      }
    }
  }
  void rehash(size_t n) {
    std::vector<Slot> old(n);  // allocated first: out of memory, the table is as it was
    old.swap(slots_);
    size_ = used_ = 0;
    for (Slot& s : old)
      if (s.key != nullptr && s.key != tombstone()) insert_new(s.key, std::move(s.value));
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  size_t used_ = 0;  // live + tombstones: what the probe sequences see
};

/// A set of pointers on the same table.
template <class K>
class FlatPtrSet {
 public:
  size_t size() const { return map_.size(); }
  bool empty() const { return map_.empty(); }
  size_t capacity() const { return map_.capacity(); }
  bool contains(const K* k) const { return map_.contains(k); }
  bool insert(K* k) { return map_.emplace(k, Unit{}); }
  bool erase(const K* k) { return map_.erase(k); }
  template <class F>
  void for_each(F&& f) const {
    map_.for_each([&](K* k, const Unit&) { f(k); });
  }
  void reserve(size_t n) { map_.reserve(n); }
  void clear() { map_.clear(); }

 private:
  struct Unit {};
  FlatPtrMap<K, Unit> map_;
};

}  // namespace vnt
