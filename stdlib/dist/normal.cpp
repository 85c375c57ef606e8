// normal(mean, sd): the Gaussian on the real line.
// SPDX-License-Identifier: Apache-2.0
#include <boost/random/normal_distribution.hpp>

#include "runtime/sp/distribution_sp.hpp"
#include "runtime/sp/registry.hpp"

namespace vnt::stdlib {
namespace {

struct Normal {
  static constexpr std::string_view kName = "normal";
  static constexpr ParamSpec kParams[] = {{"mean", Domain::kReal}, {"sd", Domain::kPositive}};
  static constexpr Support kSupport = Support::kReal;

  static double simulate(Rng& rng, double mean, double sd) {
    return boost::random::normal_distribution<double>(mean, sd)(rng.engine());
  }
  static double log_density(double x, double mean, double sd) {
    constexpr double kHalfLog2Pi = 0.91893853320467274178;
    double z = (x - mean) / sd;
    return -0.5 * z * z - std::log(sd) - kHalfLog2Pi;
  }
};

}  // namespace

void register_normal(SpRegistry& r) { r.add(make_distribution_sp<Normal>()); }

}  // namespace vnt::stdlib
