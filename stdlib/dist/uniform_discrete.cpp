// uniform_discrete(lo, hi): the integers lo, lo + 1, …, hi - 1, each with probability 1 / (hi - lo) (hi excluded, as
// Venture defines it); enumerable for up to 4096 values.
// SPDX-License-Identifier: Apache-2.0
#include <boost/random/uniform_int_distribution.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/sp/distribution_sp.hpp"
#include "runtime/sp/registry.hpp"
#include "stdlib/support/counts.hpp"

namespace vnt::stdlib {
namespace {

struct UniformDiscrete {
  static constexpr std::string_view kName = "uniform_discrete";
  static constexpr ParamSpec kParams[] = {{"lo", Domain::kInteger}, {"hi", Domain::kInteger}};
  static constexpr Support kSupport = Support::kIntegerInterval;

  static double simulate(Rng& rng, double lo, double hi) {
    check(lo, hi);
    // An integer draw: lo + floor(u (hi - lo)) with a double u skips values past a width of 2^53, u having at most 53
    // significant bits (at 2^54, every odd offset in the upper half).
    boost::random::uniform_int_distribution<int64_t> draw(static_cast<int64_t>(lo), static_cast<int64_t>(hi) - 1);
    return static_cast<double>(draw(rng.engine()));
  }
  static double log_density(double x, double lo, double hi) {
    if (!valid(lo, hi)) return kNegInf;  // an invalid parameter, as the adapter treats the declared domains
    if (!(x >= lo && x < hi) || x != std::floor(x)) return kNegInf;
    return -std::log(hi - lo);  // up to 2^54, rounded by at most 2^-53 of itself
  }
  // lo … hi - 1, unless that is more than gibbs can score (kMaxListed values).
  static std::optional<std::vector<double>> enumerate(double lo, double hi) {
    check(lo, hi);
    return listed_range(lo, hi);
  }

 private:
  // Values are doubles: past ±2^53 not every integer is one.
  static bool valid(double lo, double hi) { return lo >= -kMaxCount && hi <= kMaxCount && lo < hi; }
  static void check(double lo, double hi) {
    if (lo < -kMaxCount)
      raise(ErrorKind::kDomain, "{}: argument 1 (lo) is {}, but must be at least {}", kName, to_string(Value(lo)),
            to_string(Value(-kMaxCount)));
    if (hi > kMaxCount)
      raise(ErrorKind::kDomain, "{}: argument 2 (hi) is {}, but must be at most {}", kName, to_string(Value(hi)),
            to_string(Value(kMaxCount)));
    // The adapter checks each parameter alone; the ordering of the two is checked here.
    if (!(lo < hi))
      raise(ErrorKind::kDomain, "{}: argument 2 (hi) is {}, but must be greater than argument 1 (lo), which is {}",
            kName, to_string(Value(hi)), to_string(Value(lo)));
  }
};

}  // namespace

void register_uniform_discrete(SpRegistry& r) { r.add(make_distribution_sp<UniformDiscrete>()); }

}  // namespace vnt::stdlib
