// gamma(shape, rate): density ∝ x^(shape-1) e^(-rate x) on x > 0.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <boost/random/gamma_distribution.hpp>

#include "runtime/sp/distribution_sp.hpp"
#include "runtime/sp/registry.hpp"

namespace vnt::stdlib {
namespace {

struct Gamma {
  static constexpr std::string_view kName = "gamma";
  static constexpr ParamSpec kParams[] = {{"shape", Domain::kPositive}, {"rate", Domain::kPositive}};
  static constexpr Support kSupport = Support::kPositiveReal;

  static double simulate(Rng& rng, double shape, double rate) {
    double g = boost::random::gamma_distribution<double>(shape, 1.0)(rng.engine()) / rate;
    // A small shape can underflow to 0, which is outside the support (density 0 or +inf there).
    return std::clamp(g, std::numeric_limits<double>::min(), std::numeric_limits<double>::max());
  }
  static double log_density(double x, double shape, double rate) {
    if (!(x > 0) || !std::isfinite(x)) return kNegInf;
    return shape * std::log(rate) - std::lgamma(shape) + (shape - 1) * std::log(x) - rate * x;
  }
};

}  // namespace

void register_gamma(SpRegistry& r) { r.add(make_distribution_sp<Gamma>()); }

}  // namespace vnt::stdlib
