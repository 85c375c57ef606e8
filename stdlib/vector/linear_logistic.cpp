// (linear_logistic w x): the probability logistic(w·x) of a logistic-regression model, computed stably.
// Sizes: if size(w) = size(x) + 1, w[0] is a bias and the result is logistic(w[0] + w[1:]·x); if they are equal,
// it is logistic(w·x); any other pair of sizes is a kDomain error naming both.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/sp/registry.hpp"
#include "stdlib/support/deterministic.hpp"
#include "stdlib/support/numerics.hpp"

namespace vnt::stdlib {
namespace {

Value linear_logistic(const Call& c) {
  const Eigen::VectorXd& w = c.vector(0);
  const Eigen::VectorXd& x = c.vector(1);
  double z;
  if (w.size() == x.size()) {
    z = w.dot(x);
  } else if (w.size() == x.size() + 1) {
    z = w[0] + w.tail(x.size()).dot(x);
  } else {
    raise(ErrorKind::kDomain,
          "linear_logistic: argument 1 has size {}, but argument 2 has size {} (argument 1 must have the same size, "
          "or one more for a bias)",
          w.size(), x.size());
  }
  // The logistic never overflows, so even a linear predictor of ±1000 gives exactly 0 or 1, never NaN.
  return logistic(z);
}

}  // namespace

void register_linear_logistic(SpRegistry& r) { r.add(make_function_sp("linear_logistic", 2, 2, linear_logistic)); }

}  // namespace vnt::stdlib
