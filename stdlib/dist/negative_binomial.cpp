// negative_binomial(r, p): the failures before the r-th success in trials of probability p (for a real r, a Poisson
// whose rate is gamma(r) (1 - p) / p), 0, 1, 2, … with probability Γ(k + r) / (Γ(r) k!) p^r (1 - p)^k.
// SPDX-License-Identifier: Apache-2.0
#include <boost/random/gamma_distribution.hpp>

#include <cmath>

#include "runtime/sp/distribution_sp.hpp"
#include "runtime/sp/registry.hpp"
#include "stdlib/support/counts.hpp"

namespace vnt::stdlib {
namespace {

struct NegativeBinomial {
  static constexpr std::string_view kName = "negative_binomial";
  // p = 0 is in kProbability's [0, 1]: kMinP excludes it, as for geometric.
  static constexpr ParamSpec kParams[] = {{"r", Domain::kPositive}, {"p", Domain::kProbability}};
  static constexpr Support kSupport = Support::kNonNegativeInteger;
  // The smallest p, geometric's, and the largest mean r (1 - p) / p, poisson's largest rate. A draw's Poisson rate is
  // G (1 - p) / p with G ~ gamma(r, 1): with (1 - p) / p <= 1e12 it passes 2^53 only if G > 9007 (for r <= 1), and
  // with the mean bound only if G > 9007 r (for r > 1), each of probability below e^-8000. So the counts past 2^53,
  // outside the support, have no noticeable probability, and a draw sums at most a few dozen Poisson draws.
  static constexpr double kMinP = 1e-12;
  static constexpr double kMaxMean = 1e12;

  static double simulate(Rng& rng, double r, double p) {
    check(r, p);
    if (p == 1) return 0;
    const double scale = (1 - p) / p;
    // Boost's gamma sampler drifts past a shape of 1e10: unit_gamma_draw is then Wilson-Hilferty's G / r. Below,
    // G itself, as G / r would overflow for a subnormal r.
    const double rate = r < kHugeShape ? boost::random::gamma_distribution<double>(r, 1.0)(rng.engine()) * scale
                                       : unit_gamma_draw(rng, r) * (r * scale);
    return poisson_count(rng, rate);
  }
  static double log_density(double k, double r, double p) {
    if (!valid(r, p)) return kNegInf;  // an invalid parameter, as the adapter treats the declared domains
    if (!is_count(k, kMaxCount)) return kNegInf;
    if (p == 1) return k == 0 ? 0 : kNegInf;  // k log(0) would be NaN at k = 0
    if (k == 0) return r * std::log(p);
    // lgamma(k + r) - lgamma(r) is inf - inf past r = 2.5e305 and off by whole nats well before (lgamma(1e15) is
    // 3.4e16), which the powers then cancel. In Loader's form: the deviances of k and r from (k + r) q and (k + r) p,
    // from which they differ by kp - rq and its opposite, and Stirling's rests.
    const double q = 1 - p;
    const double d = cross_difference(k, p, r, q);
    return log_gamma_rest_diff(r, k) - log_factorial_rest(k) - bd0(k, (k + r) * q, d) - bd0(r, (k + r) * p, -d);
  }

 private:
  static double mean(double r, double p) { return r * ((1 - p) / p); }
  static bool valid(double r, double p) { return p >= kMinP && mean(r, p) <= kMaxMean; }
  static void check(double r, double p) {
    if (p < kMinP)
      raise(ErrorKind::kDomain, "{}: argument 2 (p) is {}, but must be at least {}", kName, to_string(Value(p)),
            to_string(Value(kMinP)));
    if (!(mean(r, p) <= kMaxMean))
      raise(ErrorKind::kDomain, "{}: the mean r (1 - p) / p is {} (r = {}, p = {}), but must be at most {}", kName,
            to_string(Value(mean(r, p))), to_string(Value(r)), to_string(Value(p)), to_string(Value(kMaxMean)));
  }
};

}  // namespace

void register_negative_binomial(SpRegistry& r) { r.add(make_distribution_sp<NegativeBinomial>()); }

}  // namespace vnt::stdlib
