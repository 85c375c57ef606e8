// Memory held in reserve for work that must not stop half done when an allocation fails.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

namespace vnt {

/// While an OomReserve lives, this thread holds a reserve of memory (kept from one to the next) that a new-handler
/// gives back when an allocation fails, so that the allocation succeeds. Two users:
/// - the parser: ANTLR 4.9 guards its shared DFA cache with a lock taken and released by hand around a map
///   insertion, so a std::bad_alloc there would leave the lock held and every later parse in the process waiting
///   for it forever. The next checkpoint(), which the parser calls where ANTLR holds no lock (between tokens, at
///   each rule), throws std::bad_alloc instead;
/// - the steps of a trace that nothing could undo if they stopped half way (Trace::must_complete: saving what a
///   detach takes out, putting a rejected proposal back). Such a step runs to its end on the reserve; whatever
///   allocates next finds memory short, and fails where a failure can be undone.
/// The handler is installed process-wide at the first OomReserve and hands every other failure to the handler
/// installed before it (or throws std::bad_alloc).
class OomReserve {
 public:
  /// Far more than ANTLR allocates between two checkpoints (a token, or a rule's prediction: a few DFA states), or
  /// than a detach or a restore of a small scaffold allocates (a larger one may still run out).
  static constexpr std::size_t kBytes = std::size_t{256} * 1024;

  /// What the outermost OomReserve of a thread does if a failure spent the reserve and it cannot take it back.
  enum class Retake {
    kOrThrow,  // throws std::bad_alloc, before the work it guards has begun
    kIfAble,   // goes on without one: the work must run anyway (a restore), as it would with no reserve
  };

  explicit OomReserve(Retake retake = Retake::kOrThrow);
  ~OomReserve();
  OomReserve(const OomReserve&) = delete;
  OomReserve& operator=(const OomReserve&) = delete;

  /// Throws std::bad_alloc if an allocation has failed since this thread's outermost OomReserve began.
  static void checkpoint();
  /// Ends the reserve's protection when ANTLR is done, before the destructor: a last checkpoint, so that no
  /// failure it absorbed goes unreported.
  void finish();

 private:
  bool finished_ = false;
};

}  // namespace vnt
