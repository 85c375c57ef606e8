// (linear_logistic w x): the probability logistic(w·x) of a logistic-regression model, computed stably.
// Sizes: if size(w) = size(x) + 1, w[0] is a bias and the result is logistic(w[0] + w[1:]·x); if they are equal,
// it is logistic(w·x); any other pair of sizes is a kDomain error naming both.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/core/logistic.hpp"
#include "runtime/sp/registry.hpp"
#include "stdlib/support/deterministic.hpp"

namespace vnt::stdlib {
namespace {

constexpr std::string_view kName = "linear_logistic";

double linear_predictor(const Call& c) {
  const Eigen::VectorXd& w = c.vector(0);
  const Eigen::VectorXd& x = c.vector(1);
  if (w.size() == x.size()) return w.dot(x);
  if (w.size() == x.size() + 1) return w[0] + w.tail(x.size()).dot(x);
  raise(ErrorKind::kDomain,
        "linear_logistic: argument 1 has size {}, but argument 2 has size {} (argument 1 must have the same size, "
        "or one more for a bias)",
        w.size(), x.size());
}

class LinearLogistic final : public Sp {
 public:
  std::string_view name() const override { return kName; }
  Value simulate(const Args& args, Rng& /*rng*/) const override {
    check_arity(kName, args, 2, 2);
    // The logistic never overflows, so even a linear predictor of ±1000 gives exactly 0 or 1, never NaN.
    return logistic(linear_predictor(Call(kName, args)));
  }
  // A bernoulli of this probability is scored from z where the probability has rounded to 0 or 1.
  std::optional<double> log_odds(const Args& args) const override {
    check_arity(kName, args, 2, 2);
    return linear_predictor(Call(kName, args));
  }
};

}  // namespace

void register_linear_logistic(SpRegistry& r) { r.add(std::make_shared<LinearLogistic>()); }

}  // namespace vnt::stdlib
