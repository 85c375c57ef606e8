// A stack on the top of a thread's scratch vector: the walks of regen and detach allocate nothing per call once
// the vector has grown, and a walk started inside another (through a family it evaluates) stacks above it.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <type_traits>
#include <vector>

namespace vnt {

template <class T>
class ScratchStack {
  static_assert(std::is_trivially_copyable_v<T>, "entries are dropped without running destructors");

 public:
  explicit ScratchStack(std::vector<T>& v) : v_(v), base_(v.size()) {}
  ScratchStack(const ScratchStack&) = delete;
  ScratchStack& operator=(const ScratchStack&) = delete;
  ~ScratchStack() { v_.resize(base_); }  // also on an exception; shrinking never allocates

  void push(const T& x) { v_.push_back(x); }
  T pop() {
    T x = v_.back();
    v_.pop_back();
    return x;
  }
  T& top() { return v_.back(); }  // valid until the next push, here or in a nested walk
  bool empty() const { return v_.size() == base_; }

 private:
  std::vector<T>& v_;
  size_t base_;
};

}  // namespace vnt
