// binomial(n, p): the number of successes in n independent trials of probability p, 0 … n; enumerable for n < 4096.
// SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "runtime/sp/distribution_sp.hpp"
#include "runtime/sp/registry.hpp"
#include "stdlib/support/counts.hpp"

namespace vnt::stdlib {
namespace {

struct Binomial {
  static constexpr std::string_view kName = "binomial";
  static constexpr ParamSpec kParams[] = {{"n", Domain::kNonNegativeInteger}, {"p", Domain::kProbability}};
  static constexpr Support kSupport = Support::kIntegerInterval;

  static double simulate(Rng& rng, double n, double p) {
    check_trials(kName, n);
    return binomial_count(rng, n, p, 1 - p);
  }
  static double log_density(double k, double n, double p) {
    if (n > kMaxCount) return kNegInf;  // an invalid parameter, as the adapter treats the declared domains
    if (!is_count(k, n)) return kNegInf;
    if (p == 0) return k == 0 ? 0 : kNegInf;  // 0 log 0 = 0, which the forms below would make NaN
    if (p == 1) return k == n ? 0 : kNegInf;
    if (k == 0) return n * std::log1p(-p);
    if (k == n) return n * std::log(p);
    // log C(n, k) and the powers are each about n log 2 (6e15 at n = 2^53), and lgamma's rounding alone is then tens
    // of nats. In Loader's form only the deviances of k and n - k from np and nq are left, and their difference from
    // the mean is k - np for one and np - k for the other.
    const double m = n - k, np = n * p;
    const double d = std::fma(-n, p, k);  // k - np, rounded once
    // np is subnormal (inexact) for a subnormal p: log(np) from log(n) + log(p) there.
    const double dev_k =
        np >= std::numeric_limits<double>::min() ? bd0(k, np, d) : bd0(k, np, d, std::log(n) + std::log(p));
    return log_factorial_rest(n) - log_factorial_rest(k) - log_factorial_rest(m) - dev_k - bd0(m, n * (1 - p), -d);
  }
  // 0 … n, unless that is more than gibbs can score (kMaxListed values, n up to 4095).
  static std::optional<std::vector<double>> enumerate(double n, double /*p*/) {
    check_trials(kName, n);
    return listed_range(0, n + 1);
  }
};

}  // namespace

void register_binomial(SpRegistry& r) { r.add(make_distribution_sp<Binomial>()); }

}  // namespace vnt::stdlib
