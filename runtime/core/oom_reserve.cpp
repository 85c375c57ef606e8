// The memory held in reserve, and the new-handler that gives it back.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/core/oom_reserve.hpp"

#include <atomic>
#include <cstddef>
#include <mutex>
#include <new>
#include <utility>

namespace vnt {
namespace {

constexpr std::size_t kReserveBytes = OomReserve::kBytes;

// A plain thread-local, read once per call (the handler reads it too, and one with a destructor could allocate
// at its first use).
struct Held {
  void* reserve = nullptr;
  int depth = 0;       // OomReserves alive on this thread
  bool spent = false;  // an allocation failed while one was alive
};
constinit thread_local Held t_held;

// Frees the reserve when its thread ends; made by the OomReserve constructor, never by the handler.
struct ReserveOwner {
  ~ReserveOwner() { ::operator delete(std::exchange(t_held.reserve, nullptr), kReserveBytes); }
};

std::atomic<std::new_handler> previous{nullptr};
std::mutex installing;

void on_out_of_memory() {
  Held& h = t_held;
  if (h.depth > 0 && h.reserve != nullptr) {
    h.spent = true;
    ::operator delete(std::exchange(h.reserve, nullptr), kReserveBytes);
    return;  // operator new tries again, now with the reserve's memory
  }
  if (std::new_handler handler = previous.load()) return handler();
  throw std::bad_alloc();
}

// Again at each outermost OomReserve: a program that set its own handler since then gets it called after ours.
void install() {
  std::lock_guard<std::mutex> lock(installing);
  std::new_handler replaced = std::set_new_handler(&on_out_of_memory);
  if (replaced != &on_out_of_memory) previous.store(replaced);
}

void take(Held& h, OomReserve::Retake retake) {
  try {
    install();
    thread_local ReserveOwner owner;
    if (h.reserve == nullptr) h.reserve = ::operator new(kReserveBytes);
  } catch (...) {
    if (retake == OomReserve::Retake::kOrThrow) throw;
  }
}

}  // namespace

OomReserve::OomReserve(Retake retake) {
  Held& h = t_held;
  if (h.depth == 0) {
    if (h.reserve == nullptr || std::get_new_handler() != &on_out_of_memory) take(h, retake);
    h.spent = false;
  }
  ++h.depth;
}

OomReserve::~OomReserve() {
  if (!finished_) --t_held.depth;
}

void OomReserve::finish() {
  checkpoint();
  finished_ = true;
  --t_held.depth;
}

void OomReserve::checkpoint() {
  if (t_held.spent) throw std::bad_alloc();
}

}  // namespace vnt
