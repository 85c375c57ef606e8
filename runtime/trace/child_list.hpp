// The children of a node: a vector of pointers with room for one inside. Most nodes have one reader, and the
// allocation of its list was two in five of all the allocations of evaluating a program (a collected summary, the
// family of a new table), each node made and taken apart again.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <stdexcept>

#include "runtime/core/error.hpp"

namespace vnt {

struct Node;

class ChildList {
 public:
  using value_type = Node*;
  using iterator = Node**;
  using const_iterator = Node* const*;
  using reverse_iterator = std::reverse_iterator<iterator>;

  ChildList() = default;
  ChildList(const ChildList&) = delete;  // nodes are never copied or moved
  ChildList& operator=(const ChildList&) = delete;
  ~ChildList() {
    if (!inline_storage()) delete[] data_;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }

  iterator begin() { return data_; }
  iterator end() { return data_ + size_; }
  const_iterator begin() const { return data_; }
  const_iterator end() const { return data_ + size_; }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }

  Node*& operator[](size_t i) { return data_[i]; }
  Node* operator[](size_t i) const { return data_[i]; }
  Node* at(size_t i) const {
    if (i >= size_) throw std::out_of_range("ChildList::at");
    return data_[i];
  }
  Node* back() const { return data_[size_ - 1]; }

  /// Room for n children. Out of memory, it throws and leaves the list as it was.
  void reserve(size_t n) {
    if (n <= capacity_) return;
    VNT_ASSERT(n <= UINT32_MAX, "a node with more than 2^32 children");
    auto grown = std::make_unique<Node*[]>(n);
    std::copy(begin(), end(), grown.get());
    if (!inline_storage()) delete[] data_;
    data_ = grown.release();
    capacity_ = static_cast<uint32_t>(n);
  }
  /// As std::vector's: may allocate (doubling), and then throws out of memory with the list unchanged.
  void push_back(Node* c) {
    if (size_ == capacity_) reserve(2 * size_t{capacity_});
    data_[size_++] = c;
  }
  iterator insert(const_iterator pos, Node* c) {
    const auto at = static_cast<size_t>(pos - data_);
    if (size_ == capacity_) reserve(2 * size_t{capacity_});
    std::copy_backward(data_ + at, data_ + size_, data_ + size_ + 1);
    data_[at] = c;
    ++size_;
    return data_ + at;
  }
  iterator erase(const_iterator pos) {
    const auto at = static_cast<size_t>(pos - data_);
    std::copy(data_ + at + 1, data_ + size_, data_ + at);
    --size_;
    return data_ + at;
  }

 private:
  bool inline_storage() const { return data_ == &inline_; }

  Node** data_ = &inline_;
  uint32_t size_ = 0;
  uint32_t capacity_ = 1;
  Node* inline_ = nullptr;
};

}  // namespace vnt
