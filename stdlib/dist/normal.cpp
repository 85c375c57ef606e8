// normal(mean, sd): the Gaussian on the real line.
// SPDX-License-Identifier: Apache-2.0
#include <boost/random/normal_distribution.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/sp/distribution_sp.hpp"
#include "runtime/sp/registry.hpp"
#include "stdlib/support/log_2pi.hpp"

namespace vnt::stdlib {
namespace {

struct Normal {
  static constexpr std::string_view kName = "normal";
  static constexpr ParamSpec kParams[] = {{"mean", Domain::kReal}, {"sd", Domain::kPositive}};
  static constexpr Support kSupport = Support::kReal;

  static double simulate(Rng& rng, double mean, double sd) {
    double x = boost::random::normal_distribution<double>(mean, sd)(rng.engine());
    // mean + sd z overflows for huge parameters ((normal 1e308 1e308) drew inf one time in six), a value outside
    // the support with no density: keep draws finite, as gamma does.
    constexpr double kMax = std::numeric_limits<double>::max();
    return std::clamp(x, -kMax, kMax);
  }
  static double log_density(double x, double mean, double sd) {
    // x - mean overflows for far-apart finite values (-1e308 under mean 1e308), whose z is finite.
    double d = x - mean;
    double z = std::isinf(d) ? x / sd - mean / sd : d / sd;
    return -0.5 * z * z - std::log(sd) - kHalfLog2Pi;
  }
};

}  // namespace

void register_normal(SpRegistry& r) { r.add(make_distribution_sp<Normal>()); }

}  // namespace vnt::stdlib
