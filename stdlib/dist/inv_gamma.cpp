// inv_gamma(shape, scale): density ∝ x^(-shape-1) e^(-scale/x) on x > 0 (1/x is gamma(shape, scale)).
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <boost/random/gamma_distribution.hpp>

#include "runtime/sp/distribution_sp.hpp"
#include "runtime/sp/registry.hpp"
#include "stdlib/support/large_gamma.hpp"

namespace vnt::stdlib {
namespace {

struct InvGamma {
  static constexpr std::string_view kName = "inv_gamma";
  static constexpr ParamSpec kParams[] = {{"shape", Domain::kPositive}, {"scale", Domain::kPositive}};
  static constexpr Support kSupport = Support::kPositiveReal;

  static double simulate(Rng& rng, double shape, double scale) {
    double x = shape < kHugeShape ? scale / boost::random::gamma_distribution<double>(shape, 1.0)(rng.engine())
                                  : scale / shape / unit_gamma_draw(rng, shape);
    // Keep extreme draws (gamma underflow or overflow) inside the support.
    return std::clamp(x, std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max());
  }
  static double log_density(double x, double shape, double scale) {
    if (!(x > 0) || !std::isfinite(x)) return kNegInf;
    if (shape >= kLargeParameter)  // 1/x is gamma(shape, scale), and the Jacobian 1/x^2 turns - log(1/x) into - log x
      return log_unit_gamma(shape, scale / (x * shape), std::log(scale) - std::log(x) - std::log(shape)) - std::log(x);
    return shape * std::log(scale) - std::lgamma(shape) - (shape + 1) * std::log(x) - scale / x;
  }
};

}  // namespace

void register_inv_gamma(SpRegistry& r) { r.add(make_distribution_sp<InvGamma>()); }

}  // namespace vnt::stdlib
