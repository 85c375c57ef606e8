// Names of error kinds.
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
    case ErrorKind::kInternal: return "internal error";
  }
  return "error";
}

}  // namespace vnt
