// lognormal(mu, sigma): x > 0 whose log is normal(mu, sigma).
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <boost/random/lognormal_distribution.hpp>
#include <cmath>
#include <limits>

#include "runtime/sp/distribution_sp.hpp"
#include "runtime/sp/registry.hpp"
#include "stdlib/support/log_2pi.hpp"

namespace vnt::stdlib {
namespace {

struct Lognormal {
  static constexpr std::string_view kName = "lognormal";
  static constexpr ParamSpec kParams[] = {{"mu", Domain::kReal}, {"sigma", Domain::kPositive}};
  static constexpr Support kSupport = Support::kPositiveReal;

  static double simulate(Rng& rng, double mu, double sigma) {
    const double x = boost::random::lognormal_distribution<double>(mu, sigma)(rng.engine());
    // e^(mu + sigma z) overflows to inf above 7.1e2 and underflows to 0 below -745, both outside the support: clamp
    // as gamma does (subnormal draws are kept).
    return std::clamp(x, std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max());
  }
  static double log_density(double x, double mu, double sigma) {
    if (!(x > 0) || !std::isfinite(x)) return kNegInf;
    // The standardized log, not (log x - mu)^2 / (2 sigma^2) nor a log of x sigma sqrt(2 pi): those overflow or
    // underflow (inf / inf for mu = sigma = 1e308) where the log density is finite. log x is within [-745, 710], so
    // log x - mu cannot overflow.
    const double z = (std::log(x) - mu) / sigma;
    return -0.5 * z * z - std::log(x) - std::log(sigma) - kHalfLog2Pi;
  }
};

}  // namespace

void register_lognormal(SpRegistry& r) { r.add(make_distribution_sp<Lognormal>()); }

}  // namespace vnt::stdlib
