// beta_binomial(n, a, b): the successes in n trials of a probability drawn from beta(a, b), 0 … n, k with probability
// C(n, k) B(k + a, n - k + b) / B(a, b); enumerable for n < 4096.
// SPDX-License-Identifier: Apache-2.0
#include <boost/random/gamma_distribution.hpp>

#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <vector>

#include "runtime/sp/distribution_sp.hpp"
#include "runtime/sp/registry.hpp"
#include "stdlib/support/counts.hpp"

namespace vnt::stdlib {
namespace {

// log g for g ~ gamma(shape, 1), finite where g underflows (a shape below 1: log g(shape + 1) + log(u) / shape, as
// Marsaglia and Tsang), and Wilson-Hilferty's past 1e10. The same as beta's (stdlib/dist/beta.cpp).
double log_gamma_variate(Rng& rng, double shape) {
  if (shape >= kHugeShape) return std::log(unit_gamma_draw(rng, shape)) + std::log(shape);
  if (shape >= 1) return std::log(boost::random::gamma_distribution<double>(shape, 1.0)(rng.engine()));
  const double g1 = boost::random::gamma_distribution<double>(shape + 1, 1.0)(rng.engine());
  return std::log(g1) + std::log(rng.uniform()) / shape;
}

struct BetaBinomial {
  static constexpr std::string_view kName = "beta_binomial";
  static constexpr ParamSpec kParams[] = {
      {"n", Domain::kNonNegativeInteger}, {"a", Domain::kPositive}, {"b", Domain::kPositive}};
  static constexpr Support kSupport = Support::kIntegerInterval;

  static double simulate(Rng& rng, double n, double a, double b) {
    check_trials(kName, n);
    // p = g_a / (g_a + g_b) and q = g_b / (g_a + g_b) from the gammas' logs, each accurate where it is near 0 (1 - p
    // would lose a q of 1e-20, which matters to 2^53 trials), and neither lost to the gammas' underflow.
    double t = log_gamma_variate(rng, b) - log_gamma_variate(rng, a);
    // Both logs -inf (uniform draws of exactly 0): the end each shape favours, as a coin, as beta does.
    if (std::isnan(t)) t = rng.uniform() < 1 / (1 + b / a) ? kNegInf : -kNegInf;
    return binomial_count(rng, n, 1 / (1 + std::exp(t)), 1 / (1 + std::exp(-t)));
  }

  static double log_density(double k, double n, double a, double b) {
    if (n > kMaxCount) return kNegInf;  // an invalid parameter, as the adapter treats the declared domains
    if (!is_count(k, n)) return kNegInf;
    if (n == 0) return 0;
    // log C(n, k) + log B(k + a, n - k + b) - log B(a, b) by lgamma cancels to nothing at n = 2^53 (tens of nats
    // off) or a, b = 1e300 (all digits), and is inf - inf once a + b overflows. Loader's form: the z log z parts of
    // the nine lgamma terms are minus half the G statistic of the table (k, a; m, b), m = n - k, the sum of each
    // cell's deviance from row sum times column sum / total; its cells all differ from those by plus or minus
    // delta = (k b - a m) / (n + a + b). Nothing is left to cancel but Stirling's rests, a few units each.
    const double m = n - k, s = a + b, total = s + n;
    double fn, fs;  // n / total and s / total, from halves where a + b (and the total) overflow
    if (std::isfinite(total)) {
      fn = n / total, fs = s / total;
    } else {
      const double half = 0.5 * n + 0.5 * a + 0.5 * b;
      fn = 0.5 * n / half, fs = (0.5 * a + 0.5 * b) / half;
    }
    // delta with one rounding in its numerator; where a product or the total overflows, of values scaled by 2^-64
    // (a factor that underflows then belonged to a product negligible beside the other).
    constexpr double kScale = 0x1p-64;
    const double delta = std::isfinite(total) && std::isfinite(k * b) && std::isfinite(a * m)
                             ? cross_difference(k, b, a, m) / total
                             : cross_difference(k, b * kScale, a * kScale, m) / (n * kScale + a * kScale + b * kScale);
    // A cell's expected value, its row's sum times its column's share, underflows for tiny a and b (a = b = 1e-200
    // and k = 0: 1e-400), where bd0 takes its log from the logs of the sums instead.
    auto deviance = [&](double x, double row, bool column_n, double d) {
      const double expected = row * (column_n ? fn : fs);
      if (expected >= std::numeric_limits<double>::min()) return bd0(x, expected, d);
      constexpr double kLn2 = std::numbers::ln2;
      const double log_total = std::isfinite(total) ? std::log(total) : std::log(0.5 * n + 0.5 * a + 0.5 * b) + kLn2;
      const double log_s = std::isfinite(s) ? std::log(s) : std::log(0.5 * a + 0.5 * b) + kLn2;
      return bd0(x, expected, d, std::log(row) + (column_n ? std::log(n) : log_s) - log_total);
    };
    const double row1 = a + k, row2 = b + m;
    const double deviances = deviance(k, row1, true, delta) + deviance(a, row1, false, -delta) +
                             deviance(m, row2, true, -delta) + deviance(b, row2, false, delta);
    return log_factorial_rest(n) - log_factorial_rest(k) - log_factorial_rest(m) + log_gamma_rest_diff(a, k) +
           log_gamma_rest_diff(b, m) - log_gamma_rest_diff(s, n) - deviances;
  }

  // 0 … n, unless that is more than gibbs can score (kMaxListed values, n up to 4095).
  static std::optional<std::vector<double>> enumerate(double n, double /*a*/, double /*b*/) {
    check_trials(kName, n);
    return listed_range(0, n + 1);
  }
};

}  // namespace

void register_beta_binomial(SpRegistry& r) { r.add(make_distribution_sp<BetaBinomial>()); }

}  // namespace vnt::stdlib
