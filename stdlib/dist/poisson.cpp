// poisson(rate): counts k = 0, 1, ... with probability rate^k e^(-rate) / k!.
// SPDX-License-Identifier: Apache-2.0
#include <boost/random/poisson_distribution.hpp>
#include <cstdint>

#include "runtime/sp/distribution_sp.hpp"
#include "runtime/sp/registry.hpp"
#include "stdlib/support/large_gamma.hpp"

namespace vnt::stdlib {
namespace {

struct Poisson {
  static constexpr std::string_view kName = "poisson";
  static constexpr ParamSpec kParams[] = {{"rate", Domain::kPositive}};
  static constexpr Support kSupport = Support::kNonNegativeInteger;
  // The largest rate. Boost's PTRD sampler accepts a count k by comparing (k + 1/2) log(rate/k) - rate + k
  // against a uniform, with a rounding error that grows like rate * 2^-53 (about 0.1 nat at 1e15), and its int64
  // result overflows near 9.2e18 (1e300 gave -9.2e18). Up to 1e12 both that test and log_density below stay
  // within 0.01 nat and every count is an exact integer. Larger rates are outside the parameter domain.
  static constexpr double kMaxRate = 1e12;

  static double simulate(Rng& rng, double rate) {
    if (rate > kMaxRate)
      raise(ErrorKind::kDomain, "{}: argument 1 (rate) is {}, but must be at most {}", kName, to_string(Value(rate)),
            to_string(Value(kMaxRate)));
    return static_cast<double>(boost::random::poisson_distribution<int64_t, double>(rate)(rng.engine()));
  }
  static double log_density(double x, double rate) {
    if (rate > kMaxRate) return kNegInf;  // an invalid parameter, as the adapter treats the declared domains
    if (!(x >= 0) || !std::isfinite(x) || x != std::floor(x)) return kNegInf;
    // For a large count, lgamma(x + 1) by Stirling: x log(rate) and lgamma overflow into inf - inf past 6e306.
    if (x >= kLargeParameter) {
      const double u = (rate - x) / x;
      // x (log(1 + u) - u), where 1 + u = rate / x is lost to rounding when the rate is far below the count.
      const double kernel = u < -0.5 ? x * (std::log(rate) - std::log(x)) + (x - rate) : x * log1pmx(u);
      return kernel - 0.5 * std::log(x) - kHalfLog2Pi - stirling_correction(x);
    }
    return x * std::log(rate) - rate - std::lgamma(x + 1);
  }
};

}  // namespace

void register_poisson(SpRegistry& r) { r.add(make_distribution_sp<Poisson>()); }

}  // namespace vnt::stdlib
