// Declared parameter domains and supports, so argument checks and messages are uniform across distributions.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cmath>
#include <limits>
#include <string_view>

namespace vnt {

enum class Domain {
  kReal,            // finite real
  kPositive,        // > 0
  kNonNegative,     // >= 0
  kProbability,     // in [0, 1]
  kPositiveInteger, // integer >= 1
  kNonNegativeInteger,
  kInteger,         // any finite integer
};

/// "must be positive", "must be in [0, 1]", ...
std::string_view domain_requirement(Domain d);
/// What `x`, outside domain `d`, fails: domain_requirement(d), except "must be finite" for an infinity whose sign
/// the domain accepts (inf is not "must be positive" for a positive parameter, nor "must be an integer" for an
/// integer one).
std::string_view domain_requirement(Domain d, double x);
/// Inline: every log density checks its parameters with it, and a distribution's domains are constants there.
inline bool in_domain(Domain d, double x) {
  if (!std::isfinite(x)) return false;
  switch (d) {
    case Domain::kReal: return true;
    case Domain::kPositive: return x > 0;
    case Domain::kNonNegative: return x >= 0;
    case Domain::kProbability: return x >= 0 && x <= 1;
    case Domain::kPositiveInteger: return x >= 1 && x == std::floor(x);
    case Domain::kNonNegativeInteger: return x >= 0 && x == std::floor(x);
    case Domain::kInteger: return x == std::floor(x);
  }
  return false;
}

struct ParamSpec {
  std::string_view name;
  Domain domain;
  double default_value = std::numeric_limits<double>::quiet_NaN();  // NaN: required
};

/// What a distribution's outputs are; decides how values are converted and what drift may do.
enum class Support {
  kReal,
  kPositiveReal,
  kUnitInterval,      // [0, 1]
  kInterval,          // [lo, hi] given by parameters; the distribution checks it in log_density
  kNonNegativeInteger,
  kIntegerInterval,   // integers in a range given by parameters (binomial's 0 … n); checked in log_density
  kBinary,            // 0 or 1 as numbers
  kBoolean,           // true or false
};

/// Whether outputs are real numbers that 'drift may move by a real step: not the integer supports.
inline bool support_is_real(Support s) {
  return s == Support::kReal || s == Support::kPositiveReal || s == Support::kUnitInterval ||
         s == Support::kInterval;
}

}  // namespace vnt
