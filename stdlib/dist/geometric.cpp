// geometric(p): the number of failures before the first success in trials of probability p, 0, 1, 2, … with
// probability (1 - p)^k p.
// SPDX-License-Identifier: Apache-2.0
#include <cmath>

#include "runtime/sp/distribution_sp.hpp"
#include "runtime/sp/registry.hpp"
#include "stdlib/support/counts.hpp"

namespace vnt::stdlib {
namespace {

struct Geometric {
  static constexpr std::string_view kName = "geometric";
  // p = 0, no success ever, is in kProbability's [0, 1]: kMinP excludes it, with the message of the smaller ones.
  static constexpr ParamSpec kParams[] = {{"p", Domain::kProbability}};
  static constexpr Support kSupport = Support::kNonNegativeInteger;
  // The smallest p. The mean (1 - p) / p is then at most 1e12, poisson's largest rate, every draw is below 3.7e13,
  // and a count past 2^53 (which is not in the support: its neighbours are not doubles) has probability
  // (1 - p)^(2^53) < e^-9007.
  static constexpr double kMinP = 1e-12;

  static double simulate(Rng& rng, double p) {
    check(p);
    // By inversion: floor(log(1 - U) / log(1 - p)) is geometric, and log1p keeps log(1 - p) exact for a small p
    // (Boost's geometric_distribution takes the log of a rounded 1 - p: 9e-5 off at p = 1e-12, the mean with it).
    // 1 - U is at least 2^-53, so a draw is at most 36.8 / p. At p = 1 the quotient is +0.
    return std::floor(std::log1p(-rng.uniform()) / std::log1p(-p));
  }
  static double log_density(double k, double p) {
    if (p < kMinP) return kNegInf;  // an invalid parameter, as the adapter treats the declared domains
    if (!is_count(k, kMaxCount)) return kNegInf;
    if (p == 1) return k == 0 ? 0 : kNegInf;  // k log(0) would be NaN at k = 0
    return std::log(p) + k * std::log1p(-p);
  }

 private:
  static void check(double p) {
    if (p < kMinP)
      raise(ErrorKind::kDomain, "{}: argument 1 (p) is {}, but must be at least {}", kName, to_string(Value(p)),
            to_string(Value(kMinP)));
  }
};

}  // namespace

void register_geometric(SpRegistry& r) { r.add(make_distribution_sp<Geometric>()); }

}  // namespace vnt::stdlib
