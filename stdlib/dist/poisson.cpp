// poisson(rate): counts k = 0, 1, ... with probability rate^k e^(-rate) / k!.
// SPDX-License-Identifier: Apache-2.0
#include <boost/random/poisson_distribution.hpp>
#include <cstdint>

#include "runtime/sp/distribution_sp.hpp"
#include "runtime/sp/registry.hpp"

namespace vnt::stdlib {
namespace {

struct Poisson {
  static constexpr std::string_view kName = "poisson";
  static constexpr ParamSpec kParams[] = {{"rate", Domain::kPositive}};
  static constexpr Support kSupport = Support::kNonNegativeInteger;

  static double simulate(Rng& rng, double rate) {
    return static_cast<double>(boost::random::poisson_distribution<int64_t, double>(rate)(rng.engine()));
  }
  static double log_density(double x, double rate) {
    if (!(x >= 0) || !std::isfinite(x) || x != std::floor(x)) return kNegInf;
    return x * std::log(rate) - rate - std::lgamma(x + 1);
  }
};

}  // namespace

void register_poisson(SpRegistry& r) { r.add(make_distribution_sp<Poisson>()); }

}  // namespace vnt::stdlib
