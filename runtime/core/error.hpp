// The one exception type of vnt: a kind, an optional source span and a call stack.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/core/source_span.hpp"

namespace vnt {

enum class ErrorKind {
  kSyntax,
  kName,
  kArity,
  kType,
  kDomain,
  kZeroProbability,
  kParam,
  kInference,
  kIo,
  kOutOfMemory,  // not an impossibility: a kernel that met it must fail, not reject or weigh a particle zero
  kInternal,
};

/// Short lowercase name of an error kind ("syntax error", "type error", ...).
std::string_view error_kind_name(ErrorKind kind);

/// One "in call to ..." line of an error's call stack; `repeats` counts identical consecutive calls.
struct ErrorFrame {
  std::string text;
  size_t repeats = 1;
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message, SourceSpan span = {})
      : std::runtime_error(message), kind_(kind), message_(std::move(message)), span_(std::move(span)) {}

  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }
  const SourceSpan& span() const { return span_; }
  bool has_span() const { return span_.known(); }
  /// The call stack, innermost call first. Identical consecutive calls share one frame; past kMaxFrames the
  /// outermost call stays last and the calls before it are dropped and counted in omitted_frames().
  const std::vector<ErrorFrame>& frames() const { return frames_; }
  size_t omitted_frames() const { return omitted_frames_; }

  /// Attaches a span if the error has none yet (SPs throw without a position; the caller knows it).
  void attach_span(const SourceSpan& span) {
    if (!span_.known()) span_ = span;
  }
  /// Adds an "in call to ..." frame, outside the frames added so far (see frames()).
  void add_frame(std::string frame);

  static constexpr size_t kMaxFrames = 8;

 private:
  ErrorKind kind_;
  std::string message_;
  SourceSpan span_;
  std::vector<ErrorFrame> frames_;
  size_t omitted_frames_ = 0;
};

/// A domain error or a value of probability zero: the state being evaluated has probability zero.
inline bool is_impossibility(const Error& e) {
  return e.kind() == ErrorKind::kDomain || e.kind() == ErrorKind::kZeroProbability;
}

/// In a catch handler: whether the exception being handled is an impossibility (other exceptions are not).
inline bool impossibility_in_flight() {
  try {
    throw;
  } catch (const Error& e) {
    return is_impossibility(e);
  } catch (...) {
    return false;
  }
}

/// Throws an Error of the given kind with a fmt-formatted message (kept out of line: cold path).
template <typename... A>
[[noreturn]] void raise(ErrorKind kind, fmt::format_string<A...> f, A&&... args) {
  throw Error(kind, fmt::format(f, std::forward<A>(args)...));
}

template <typename... A>
[[noreturn]] void raise_at(const SourceSpan& span, ErrorKind kind, fmt::format_string<A...> f, A&&... args) {
  throw Error(kind, fmt::format(f, std::forward<A>(args)...), span);
}

}  // namespace vnt

/// Internal invariant check: throws kInternal with the C++ file and line. Never for user data.
#define VNT_ASSERT(cond, ...)                                                                       \
  do {                                                                                              \
    if (!(cond))                                                                                    \
      throw ::vnt::Error(::vnt::ErrorKind::kInternal,                                               \
                         ::fmt::format("internal error at {}:{}: {}", __FILE__, __LINE__,           \
                                       ::fmt::format(__VA_ARGS__)));                                \
  } while (false)
