// uniform_continuous(lo, hi): the flat density 1 / (hi - lo) on [lo, hi].
// SPDX-License-Identifier: Apache-2.0
#include <boost/random/uniform_real_distribution.hpp>

#include "runtime/sp/distribution_sp.hpp"
#include "runtime/sp/registry.hpp"

namespace vnt::stdlib {
namespace {

struct UniformContinuous {
  static constexpr std::string_view kName = "uniform_continuous";
  static constexpr ParamSpec kParams[] = {{"lo", Domain::kReal}, {"hi", Domain::kReal}};
  static constexpr Support kSupport = Support::kInterval;

  static double simulate(Rng& rng, double lo, double hi) {
    // The adapter checks each parameter alone; the ordering of the two is checked here.
    if (!(lo < hi))
      raise(ErrorKind::kDomain, "{}: argument 2 (hi) is {}, but must be greater than argument 1 (lo), which is {}",
            kName, to_string(Value(hi)), to_string(Value(lo)));
    return boost::random::uniform_real_distribution<double>(lo, hi)(rng.engine());
  }
  static double log_density(double x, double lo, double hi) {
    if (!(lo < hi) || !(x >= lo && x <= hi)) return kNegInf;
    // hi - lo overflows to inf for wide finite bounds (-1e308, 1e308), whose density is positive; halves do not
    // (but they would lose a subnormal width, so only then).
    double width = hi - lo;
    if (std::isinf(width)) return -(std::log(hi / 2 - lo / 2) + std::log(2.0));
    return -std::log(width);
  }
};

}  // namespace

void register_uniform_continuous(SpRegistry& r) { r.add(make_distribution_sp<UniformContinuous>()); }

}  // namespace vnt::stdlib
