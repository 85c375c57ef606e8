// Running out of memory inside ANTLR without leaving its locks held.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

namespace vnt::parser::detail {

/// ANTLR 4.9 guards its shared DFA cache with a lock taken and released by hand around a map insertion, so a
/// std::bad_alloc there leaves the lock held and every later parse in the process waits for it forever. While an
/// OomReserve lives, this thread holds a reserve of memory (kept between parses) that a new-handler gives back when
/// an allocation fails, so the allocation succeeds; the next checkpoint(), which the parser calls where ANTLR holds
/// no lock (between tokens, at each rule), then throws std::bad_alloc. The handler is installed process-wide at the
/// first parse and hands every other failure to the handler installed before it (or throws std::bad_alloc).
class OomReserve {
 public:
  /// Far more than ANTLR allocates between two checkpoints (a token, or a rule's prediction: a few DFA states).
  static constexpr std::size_t kBytes = std::size_t{256} * 1024;

  /// Takes the reserve back if a failure spent it: throws std::bad_alloc, before anything of ANTLR ran, if it
  /// cannot.
  OomReserve();
  ~OomReserve();
  OomReserve(const OomReserve&) = delete;
  OomReserve& operator=(const OomReserve&) = delete;

  /// Throws std::bad_alloc if an allocation has failed since this thread's OomReserve began.
  static void checkpoint();
  /// Ends the reserve's protection when ANTLR is done, before the destructor: a last checkpoint, so that no
  /// failure it absorbed goes unreported.
  void finish();

 private:
  bool finished_ = false;
};

}  // namespace vnt::parser::detail
