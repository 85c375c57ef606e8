// flip(p = 0.5): true with probability p, else false (`bernoulli` is the 0/1 twin).
// SPDX-License-Identifier: Apache-2.0
#include <boost/random/bernoulli_distribution.hpp>

#include "runtime/sp/distribution_sp.hpp"
#include "runtime/sp/registry.hpp"

namespace vnt::stdlib {
namespace {

struct Flip {
  static constexpr std::string_view kName = "flip";
  static constexpr ParamSpec kParams[] = {{"p", Domain::kProbability, 0.5}};
  static constexpr Support kSupport = Support::kBoolean;

  // The adapter turns 1/0 into true/false (and back for log_density).
  static double simulate(Rng& rng, double p) {
    return boost::random::bernoulli_distribution<double>(p)(rng.engine()) ? 1.0 : 0.0;
  }
  static double log_density(double x, double p) {
    if (x == 1.0) return std::log(p);
    if (x == 0.0) return std::log1p(-p);
    return kNegInf;
  }
  static std::vector<double> enumerate(double /*p*/) { return {0.0, 1.0}; }
};

}  // namespace

void register_flip(SpRegistry& r) { r.add(make_distribution_sp<Flip>()); }

}  // namespace vnt::stdlib
