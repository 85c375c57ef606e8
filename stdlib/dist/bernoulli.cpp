// bernoulli(p = 0.5): 1 with probability p, else 0; and its boolean twin flip(p = 0.5): true or false.
// One distribution with two output encodings, so both are defined here.
// SPDX-License-Identifier: Apache-2.0
#include <boost/random/bernoulli_distribution.hpp>

#include <limits>

#include "runtime/core/logistic.hpp"
#include "runtime/sp/distribution_sp.hpp"
#include "runtime/sp/registry.hpp"

namespace vnt::stdlib {
namespace {

struct Bernoulli {
  static constexpr std::string_view kName = "bernoulli";
  static constexpr ParamSpec kParams[] = {{"p", Domain::kProbability, 0.5}};
  static constexpr Support kSupport = Support::kBinary;

  static double simulate(Rng& rng, double p) {
    return boost::random::bernoulli_distribution<double>(p)(rng.engine()) ? 1.0 : 0.0;
  }
  static double log_density(double x, double p) {
    if (x == 1.0) return std::log(p);
    if (x == 0.0) return std::log1p(-p);
    return kNegInf;
  }
  static std::vector<double> enumerate(double /*p*/) { return {0.0, 1.0}; }
  // 1 - p keeps fewer than 7 significant digits above 1 - 1e-6, and p is 0 or subnormal below the smallest
  // normal double: there, when p is logistic(z) as from linear_logistic, score from z (exact in both tails).
  static bool rounded(double x, double p) {
    return x == 0.0 ? p > 1.0 - 1e-6 : p < std::numeric_limits<double>::min();
  }
  static double log_density_logit(double x, double z) { return logistic_log_density(z, x); }
};

// The adapter turns 1/0 into true/false (and back for log_density).
struct Flip : Bernoulli {
  static constexpr std::string_view kName = "flip";
  static constexpr Support kSupport = Support::kBoolean;
};

}  // namespace

void register_bernoulli(SpRegistry& r) {
  r.add(make_distribution_sp<Bernoulli>());
  r.add(make_distribution_sp<Flip>());
}

}  // namespace vnt::stdlib
