// Parameter domain checks.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/sp/param_spec.hpp"

#include <cmath>
#include <limits>

namespace vnt {

std::string_view domain_requirement(Domain d) {
  switch (d) {
    case Domain::kReal: return "must be a finite number";
    case Domain::kPositive: return "must be positive";
    case Domain::kNonNegative: return "must be non-negative";
    case Domain::kProbability: return "must be in [0, 1]";
    case Domain::kPositiveInteger: return "must be a positive integer";
    case Domain::kNonNegativeInteger: return "must be a non-negative integer";
    case Domain::kInteger: return "must be an integer";
  }
  return "is invalid";
}

std::string_view domain_requirement(Domain d, double x) {
  if ((d == Domain::kPositive || d == Domain::kNonNegative) && x == std::numeric_limits<double>::infinity())
    return "must be finite";
  if (d == Domain::kInteger && std::isinf(x)) return "must be finite";  // floor(inf) is inf: not "an integer"
  return domain_requirement(d);
}

}  // namespace vnt
