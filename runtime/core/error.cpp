// Names of error kinds, and the call stack of an error.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/core/error.hpp"

namespace vnt {

std::string_view error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kSyntax: return "syntax error";
    case ErrorKind::kName: return "name error";
    case ErrorKind::kArity: return "arity error";
    case ErrorKind::kType: return "type error";
    case ErrorKind::kDomain: return "domain error";
    case ErrorKind::kZeroProbability: return "zero probability";
    case ErrorKind::kParam: return "parameter error";
    case ErrorKind::kInference: return "inference error";
    case ErrorKind::kIo: return "i/o error";
    case ErrorKind::kOutOfMemory: return "out of memory";
    case ErrorKind::kInternal: return "internal error";
  }
  return "error";
}

void Error::add_frame(std::string frame) {
  // Runaway recursion adds thousands of identical frames: they collapse into one, and the outermost call (where
  // the program entered the recursion) is kept in the last slot.
  if (!frames_.empty() && frames_.back().text == frame) {
    ++frames_.back().repeats;
    return;
  }
  if (frames_.size() == kMaxFrames) {
    omitted_frames_ += frames_.back().repeats;
    frames_.pop_back();
  }
  frames_.push_back(ErrorFrame{std::move(frame), 1});
}

}  // namespace vnt
