// Lists as views of shared fixed buffers: rest and (amortised) pair in O(1), so recursion over a list is linear.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <atomic>
#include <iterator>

#include "runtime/value/value.hpp"

namespace vnt {
namespace {

std::atomic<size_t> g_live_slots{0};

// The smallest buffer a prepend allocates: building a list from () by pair reallocates at 1, 8, 16, 32, ... items.
constexpr size_t kMinCapacity = 8;

}  // namespace

// A buffer whose slots [front, cap) hold items. front only moves down, one slot per winning prepend, so a slot is
// written once, before any view covers it; the buffer is never reallocated, so a view's items never move.
// The slots are a vector's, never resized: a list made from a vector takes over its buffer (no copy, no second
// allocation; a mem key is one per request).
struct List::Storage {
  explicit Storage(size_t n) : data(n), cap(n), front(n) { g_live_slots += n; }
  explicit Storage(std::vector<Value> items) : data(std::move(items)), cap(data.size()), front(0) {
    if (data.capacity() - cap > cap / 4) data.shrink_to_fit();  // a list kept long holds no spare room
    g_live_slots += cap;
  }
  ~Storage() { g_live_slots -= cap; }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  std::vector<Value> data;
  size_t cap;
  std::atomic<size_t> front;
};

List::List(std::vector<Value> items) {
  if (items.empty()) return;
  size_ = items.size();
  s_ = std::make_shared<Storage>(std::move(items));
  first_ = s_->data.data();
}

List List::prepend(Value x) const {
  if (s_) {
    size_t begin = static_cast<size_t>(first_ - s_->data.data());
    // The slot before a front-most view is covered by no view: whoever moves front over it owns it. The exchange
    // only decides ownership; the item reaches other threads with the view returned, however that is handed over.
    size_t expected = begin;
    if (begin > 0 && s_->front.compare_exchange_strong(expected, begin - 1, std::memory_order_relaxed)) {
      s_->data[begin - 1] = std::move(x);
      return List(s_, first_ - 1, size_ + 1);
    }
  }
  // Not front-most (another list was built on this one), or no room: a new buffer with as much room again in
  // front, so that a list built by repeated pair is copied O(log n) times, O(n) items in all.
  size_t n = size_ + 1;
  auto s = std::make_shared<Storage>(std::max(kMinCapacity, 2 * n));
  Value* first = s->data.data() + (s->cap - n);
  *first = std::move(x);
  std::copy(first_, first_ + size_, first + 1);
  s->front = s->cap - n;
  return List(std::move(s), first, n);
}

List List::rest() const {
  if (size_ <= 1) return List();  // an empty view holds no buffer, so it keeps none alive
  return List(s_, first_ + 1, size_ - 1);
}

size_t List::live_slots() { return g_live_slots.load(); }

}  // namespace vnt
