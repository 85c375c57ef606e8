// Student-t critical values for the austerity test (Boost.Math), computed once per test point.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/infer/austerity/t_quantile_cache.hpp"

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <limits>
#include <numbers>
#include <stdexcept>

#include "runtime/core/error.hpp"

namespace vnt {

double TQuantileCache::compute(double epsilon, size_t df) {
  VNT_ASSERT(df >= 1 && epsilon >= 0.0 && epsilon < 1.0, "t quantile for eps {} with df {}", epsilon, df);
  // ε = 0 asks for the quantile at probability 1: the test never decides before n = N.
  if (epsilon == 0.0) return std::numeric_limits<double>::infinity();
  try {
    const boost::math::students_t dist(static_cast<double>(df));
    // The upper-tail quantile equals T⁻¹(1 − ε) without rounding 1 − ε first.
    return boost::math::quantile(boost::math::complement(dist, epsilon));
  } catch (const std::overflow_error&) {
    // A tiny ε at few degrees of freedom (1e-310 at df 1): the quantile exceeds every double, no t decides.
    return std::numeric_limits<double>::infinity();
  } catch (const std::exception& e) {
    VNT_ASSERT(false, "t quantile for eps {} with df {} failed: {}", epsilon, df, e.what());
  }
  return std::numeric_limits<double>::quiet_NaN();
}

double TQuantileCache::floor(double epsilon) {
  if (epsilon > 0.5) return -std::numeric_limits<double>::infinity();
  if (epsilon == 0.0) return std::numeric_limits<double>::infinity();
  try {
    const double z = boost::math::quantile(boost::math::complement(boost::math::normal(), epsilon));
    return z - 1e-12 * std::abs(z);
  } catch (const std::overflow_error&) {  // as in compute
    return std::numeric_limits<double>::infinity();
  }
}

double TQuantileCache::epsilon_at(size_t k) const {
  if (spending_ == ErrorSpending::kPerTest) return epsilon_;
  const auto kk = static_cast<double>(k);
  return epsilon_ * 6.0 / (std::numbers::pi * std::numbers::pi * kk * kk);
}

double TQuantileCache::fill(size_t k) {
  VNT_ASSERT(batch_ >= 1 && k >= 1 && k * batch_ >= 2, "t critical value for test {} with Nbatch {}", k,
             batch_);
  if (critical_.size() < k) critical_.resize(k, std::numeric_limits<double>::quiet_NaN());
  const double c = compute(epsilon_at(k), k * batch_ - 1);
  critical_[k - 1] = c;
  ++filled_;
  return c;
}

}  // namespace vnt
