// beta(alpha, beta): density ∝ x^(alpha-1) (1-x)^(beta-1) on [0, 1].
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <boost/random/beta_distribution.hpp>

#include "runtime/sp/distribution_sp.hpp"
#include "runtime/sp/registry.hpp"

namespace vnt::stdlib {
namespace {

// (a - 1) log(y) with the convention 0 * log(0) = 0, so alpha = 1 has a finite density at the boundary.
double power_term(double a, double log_y) { return a == 1.0 ? 0.0 : (a - 1) * log_y; }

struct Beta {
  static constexpr std::string_view kName = "beta";
  static constexpr ParamSpec kParams[] = {{"alpha", Domain::kPositive}, {"beta", Domain::kPositive}};
  static constexpr Support kSupport = Support::kUnitInterval;

  static double simulate(Rng& rng, double alpha, double beta) {
    double x = boost::random::beta_distribution<double>(alpha, beta)(rng.engine());
    // Boost draws g_a / (g_a + g_b); both gammas underflow to 0 only for tiny alpha and beta, where the
    // distribution is (up to rounding) a coin between the endpoints with P(1) = alpha / (alpha + beta).
    if (std::isnan(x)) x = rng.uniform() * (alpha + beta) < alpha ? 1.0 : 0.0;
    // Endpoints can have infinite density; keep draws strictly inside.
    return std::clamp(x, std::numeric_limits<double>::min(), std::nextafter(1.0, 0.0));
  }
  static double log_density(double x, double alpha, double beta) {
    if (!(x >= 0 && x <= 1)) return kNegInf;
    double log_beta_fn = std::lgamma(alpha) + std::lgamma(beta) - std::lgamma(alpha + beta);
    return power_term(alpha, std::log(x)) + power_term(beta, std::log1p(-x)) - log_beta_fn;
  }
};

}  // namespace

void register_beta(SpRegistry& r) { r.add(make_distribution_sp<Beta>()); }

}  // namespace vnt::stdlib
