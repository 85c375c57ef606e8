// beta(alpha, beta): density ∝ x^(alpha-1) (1-x)^(beta-1) on [0, 1].
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <boost/random/beta_distribution.hpp>

#include "runtime/sp/distribution_sp.hpp"
#include "runtime/sp/registry.hpp"
#include "stdlib/support/large_gamma.hpp"

namespace vnt::stdlib {
namespace {

// (a - 1) log(y) with the convention 0 * log(0) = 0, so alpha = 1 has a finite density at the boundary.
double power_term(double a, double log_y) { return a == 1.0 ? 0.0 : (a - 1) * log_y; }

// The log density for a, b >= 10 with one of them large. Both power terms are then about -(a + b) H(mu), equal
// and opposite to log B(a, b): written around mu = a / (a + b) with log1pmx, nothing is left to cancel.
double log_density_large(double x, double a, double b) {
  if (x == 0 || x == 1) return kNegInf;
  const double mu = 1 / (1 + b / a), nu = 1 / (1 + a / b);  // a / (a + b) and b / (a + b), without a + b
  const double d = mu <= 0.5 ? x - mu : nu - (1 - x);        // x - mu, from the side where it is exact
  // (a - 1) log(x / mu) + (b - 1) log((1 - x) / nu): the log1pmx parts, then the linear parts, summed exactly.
  const double kernel = (a - 1) * log1pmx(d / mu) + (b - 1) * log1pmx(-d / nu) + d * (a / b - b / a);
  const double log_sum = std::log(std::max(a, b)) + std::log1p(std::min(a, b) / std::max(a, b));  // log(a + b)
  const double corr = stirling_correction(a) + stirling_correction(b) - stirling_correction(a + b);
  // - log B(a, b) by Stirling is - log(2 pi) / 2 - (a - 1/2) log mu - (b - 1/2) log nu + log(a + b) / 2 - corr.
  return kernel + 0.5 * (log_sum + std::log1p(b / a) + std::log1p(a / b)) - kHalfLog2Pi - corr;
}

struct Beta {
  static constexpr std::string_view kName = "beta";
  static constexpr ParamSpec kParams[] = {{"alpha", Domain::kPositive}, {"beta", Domain::kPositive}};
  static constexpr Support kSupport = Support::kUnitInterval;

  static double simulate(Rng& rng, double alpha, double beta) {
    double x = 0;
    if (std::min(alpha, beta) < kTinyShape)
      x = beta_from_log_gammas(rng, alpha, beta);
    else if (std::max(alpha, beta) < kHugeShape)
      x = boost::random::beta_distribution<double>(alpha, beta)(rng.engine());
    else
      x = beta_from_units(rng, alpha, beta);
    // Both gammas' logs -inf (a uniform draw of exactly 0): the endpoint each shape favours, as a coin.
    if (std::isnan(x)) x = rng.uniform() * (alpha + beta) < alpha ? 1.0 : 0.0;
    // Endpoints can have infinite density; keep draws strictly inside.
    return std::clamp(x, std::numeric_limits<double>::denorm_min(), std::nextafter(1.0, 0.0));
  }
  static double log_density(double x, double alpha, double beta) {
    if (!(x >= 0 && x <= 1)) return kNegInf;
    if (std::min(alpha, beta) >= 10 && std::max(alpha, beta) >= kLargeParameter)
      return log_density_large(x, alpha, beta);
    return power_term(alpha, std::log(x)) + power_term(beta, std::log1p(-x)) - log_beta(alpha, beta);
  }

 private:
  // g_a / (g_a + g_b) as 1 / (1 + (b / a) (u_b / u_a)) with u = g / shape: Boost's sum of two gammas overflows.
  static double beta_from_units(Rng& rng, double alpha, double beta) {
    const double ua = unit_gamma_draw(rng, alpha), ub = unit_gamma_draw(rng, beta);
    return 1 / (1 + beta / alpha * (ub / ua));
  }

  // Below this shape a gamma draw underflows to 0 with probability about e^(-745 shape) (6e-4 at 0.01): Boost's
  // beta then lost most draws where both gammas are tiny, the interior of (0, 1) (1e-3: 22 % too few).
  static constexpr double kTinyShape = 0.1;

  // log g for g ~ gamma(shape, 1): log g(shape + 1) + log(u) / shape below 1 (Marsaglia and Tsang), which is
  // finite where g itself underflows.
  static double log_gamma_draw(Rng& rng, double shape) {
    if (shape >= kHugeShape) return std::log(unit_gamma_draw(rng, shape)) + std::log(shape);
    if (shape >= 1) return std::log(boost::random::gamma_distribution<double>(shape, 1.0)(rng.engine()));
    const double g1 = boost::random::gamma_distribution<double>(shape + 1, 1.0)(rng.engine());
    return std::log(g1) + std::log(rng.uniform()) / shape;
  }

  // g_a / (g_a + g_b) = 1 / (1 + e^(log g_b - log g_a)).
  static double beta_from_log_gammas(Rng& rng, double alpha, double beta) {
    const double la = log_gamma_draw(rng, alpha), lb = log_gamma_draw(rng, beta);
    return 1 / (1 + std::exp(lb - la));
  }
};

}  // namespace

void register_beta(SpRegistry& r) { r.add(make_distribution_sp<Beta>()); }

}  // namespace vnt::stdlib
