// gamma(shape, rate): density ∝ x^(shape-1) e^(-rate x) on x > 0.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <boost/random/gamma_distribution.hpp>

#include "runtime/sp/distribution_sp.hpp"
#include "runtime/sp/registry.hpp"
#include "stdlib/support/large_gamma.hpp"

namespace vnt::stdlib {
namespace {

struct Gamma {
  static constexpr std::string_view kName = "gamma";
  static constexpr ParamSpec kParams[] = {{"shape", Domain::kPositive}, {"rate", Domain::kPositive}};
  static constexpr Support kSupport = Support::kPositiveReal;

  static double simulate(Rng& rng, double shape, double rate) {
    double g = shape < kHugeShape ? boost::random::gamma_distribution<double>(shape, 1.0)(rng.engine()) / rate
                                  : unit_gamma_draw(rng, shape) * (shape / rate);
    // A small shape can underflow to 0, which is outside the support (density 0 or +inf there).
    return std::clamp(g, std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max());
  }
  static double log_density(double x, double shape, double rate) {
    if (!(x > 0) || !std::isfinite(x)) return kNegInf;
    if (shape >= kLargeParameter) {  // shape log(rate) and lgamma(shape) would overflow into inf - inf
      const double rx = rate * x;
      const double t = std::isfinite(rx) ? rx / shape : rate / shape * x;
      return log_unit_gamma(shape, t, std::log(rate) + std::log(x) - std::log(shape)) - std::log(x);
    }
    return shape * std::log(rate) - std::lgamma(shape) + (shape - 1) * std::log(x) - rate * x;
  }
};

}  // namespace

void register_gamma(SpRegistry& r) { r.add(make_distribution_sp<Gamma>()); }

}  // namespace vnt::stdlib
