// exponential(rate): density rate e^(-rate x) on x > 0.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <boost/random/exponential_distribution.hpp>
#include <cmath>
#include <limits>

#include "runtime/sp/distribution_sp.hpp"
#include "runtime/sp/registry.hpp"

namespace vnt::stdlib {
namespace {

struct Exponential {
  static constexpr std::string_view kName = "exponential";
  static constexpr ParamSpec kParams[] = {{"rate", Domain::kPositive}};
  static constexpr Support kSupport = Support::kPositiveReal;

  static double simulate(Rng& rng, double rate) {
    const double x = boost::random::exponential_distribution<double>(rate)(rng.engine());
    // E / rate overflows for a tiny rate ((exponential 1e-310) drew inf 98 % of the time) and can underflow to 0 for
    // a huge one, both outside the support: clamp as gamma does (subnormal draws are kept).
    return std::clamp(x, std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max());
  }
  static double log_density(double x, double rate) {
    if (!(x > 0) || !std::isfinite(x)) return kNegInf;
    // In logs: rate e^(-rate x) underflows from rate x = 745 on. Where rate x overflows, the log density is within
    // rounding of -1.8e308 or below, and -inf is its value.
    return std::log(rate) - rate * x;
  }
};

}  // namespace

void register_exponential(SpRegistry& r) { r.add(make_distribution_sp<Exponential>()); }

}  // namespace vnt::stdlib
