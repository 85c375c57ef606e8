// The memory held in reserve while ANTLR runs, and the new-handler that gives it back.
// SPDX-License-Identifier: Apache-2.0
#include "parser/oom_reserve.hpp"

#include <atomic>
#include <cstddef>
#include <mutex>
#include <new>
#include <utility>

namespace vnt::parser::detail {
namespace {

constexpr std::size_t kReserveBytes = OomReserve::kBytes;

// Plain thread-locals: the handler reads them, and one with a destructor could allocate at its first use.
thread_local void* t_reserve = nullptr;
thread_local int t_depth = 0;       // OomReserves alive on this thread
thread_local bool t_spent = false;  // an allocation failed while one was alive

// Frees the reserve when its thread ends; made by the OomReserve constructor, never by the handler.
struct ReserveOwner {
  ~ReserveOwner() { ::operator delete(std::exchange(t_reserve, nullptr), kReserveBytes); }
};

std::atomic<std::new_handler> previous{nullptr};
std::mutex installing;

void on_out_of_memory() {
  if (t_depth > 0 && t_reserve != nullptr) {
    t_spent = true;
    ::operator delete(std::exchange(t_reserve, nullptr), kReserveBytes);
    return;  // operator new tries again, now with the reserve's memory
  }
  if (std::new_handler h = previous.load()) return h();
  throw std::bad_alloc();
}

// Again at each parse: a program that set its own handler since then gets it called after ours.
void install() {
  if (std::get_new_handler() == &on_out_of_memory) return;
  std::lock_guard<std::mutex> lock(installing);
  std::new_handler replaced = std::set_new_handler(&on_out_of_memory);
  if (replaced != &on_out_of_memory) previous.store(replaced);
}

}  // namespace

OomReserve::OomReserve() {
  install();
  if (t_depth == 0) {
    thread_local ReserveOwner owner;
    if (t_reserve == nullptr) t_reserve = ::operator new(kReserveBytes);
    t_spent = false;
  }
  ++t_depth;
}

OomReserve::~OomReserve() {
  if (!finished_) --t_depth;
}

void OomReserve::finish() {
  checkpoint();
  finished_ = true;
  --t_depth;
}

void OomReserve::checkpoint() {
  if (t_spent) throw std::bad_alloc();
}

}  // namespace vnt::parser::detail
