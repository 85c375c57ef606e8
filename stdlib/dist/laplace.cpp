// laplace(mu, b): density e^(-|x - mu| / b) / (2 b) on the real line.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <boost/random/laplace_distribution.hpp>
#include <cmath>
#include <limits>
#include <numbers>

#include "runtime/sp/distribution_sp.hpp"
#include "runtime/sp/registry.hpp"

namespace vnt::stdlib {
namespace {

struct Laplace {
  static constexpr std::string_view kName = "laplace";
  static constexpr ParamSpec kParams[] = {{"mu", Domain::kReal}, {"b", Domain::kPositive}};
  static constexpr Support kSupport = Support::kReal;

  static double simulate(Rng& rng, double mu, double b) {
    const double x = boost::random::laplace_distribution<double>(mu, b)(rng.engine());
    // mu + b E overflows for huge parameters ((laplace 1e308 1e308) drew inf or -inf three times in ten): keep
    // draws finite, as normal does.
    constexpr double kMax = std::numeric_limits<double>::max();
    return std::clamp(x, -kMax, kMax);
  }
  static double log_density(double x, double mu, double b) {
    if (!std::isfinite(x)) return kNegInf;
    // x - mu overflows for far-apart finite values (-1e308 under mu 1e308): they then have opposite signs, and
    // |x - mu| / b is |x| / b + |mu| / b. log b + log 2, not log(2 b), which overflows for b above 9e307.
    const double d = std::abs(x - mu);
    const double t = std::isinf(d) ? std::abs(x) / b + std::abs(mu) / b : d / b;
    return -t - std::log(b) - std::numbers::ln2;
  }
};

}  // namespace

void register_laplace(SpRegistry& r) { r.add(make_distribution_sp<Laplace>()); }

}  // namespace vnt::stdlib
