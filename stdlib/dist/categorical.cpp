// categorical(p): the index k in 0 .. len(p)-1 (a number) with probability p[k]; enumerable.
// SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <optional>
#include <string>

#include "runtime/core/error.hpp"
#include "runtime/sp/registry.hpp"
#include "runtime/sp/sp.hpp"
#include "runtime/value/coerce.hpp"

namespace vnt::stdlib {
namespace {

constexpr std::string_view kCategoricalName = "categorical";
constexpr double kSumTolerance = 1e-8;

// Why p is not a probability vector (the tail of the message), or nullopt if it is one.
std::optional<std::string> problem(const Eigen::VectorXd& p) {
  if (p.size() == 0) return "is empty, but must have at least one element";
  for (Eigen::Index k = 0; k < p.size(); ++k)
    if (!std::isfinite(p[k]) || p[k] < 0)
      return fmt::format("has p[{}] = {}, but each probability must be finite and non-negative", k,
                         to_string(Value(p[k])));
  double sum = p.sum();
  if (!(std::abs(sum - 1.0) <= kSumTolerance))
    return fmt::format("sums to {}, but must sum to 1", to_string(Value(sum)));
  return std::nullopt;
}

class Categorical final : public Sp {
 public:
  std::string_view name() const override { return kCategoricalName; }
  bool is_random() const override { return true; }

  Value simulate(const Args& args, Rng& rng) const override {
    const Eigen::VectorXd& p = checked(args);
    // Inverse cdf against the actual sum, which may differ from 1 by the tolerance.
    double u = rng.uniform() * p.sum();
    Eigen::Index last = 0;
    for (Eigen::Index k = 0; k < p.size(); ++k) {
      if (p[k] == 0) continue;
      last = k;
      u -= p[k];
      if (u < 0) return Value(static_cast<double>(k));
    }
    return Value(static_cast<double>(last));  // rounding left u at 0: the last non-zero entry
  }

  double log_density(const Value& x, const Args& args) const override {
    check_arity(kCategoricalName, args, 1);
    const Eigen::VectorXd& p = as_vector(args[0], ArgRef{kCategoricalName, 1, "p"});
    if (problem(p)) return kNegInf;
    const double* k = std::get_if<double>(&x);
    if (!k || !(*k >= 0) || *k != std::floor(*k) || *k >= static_cast<double>(p.size())) return kNegInf;
    return std::log(p[static_cast<Eigen::Index>(*k)] / p.sum());
  }

  std::optional<std::vector<Value>> enumerate(const Args& args) const override {
    const Eigen::VectorXd& p = checked(args);
    std::vector<Value> out;
    for (Eigen::Index k = 0; k < p.size(); ++k) out.emplace_back(static_cast<double>(k));
    return out;
  }

 private:
  static const Eigen::VectorXd& checked(const Args& args) {
    check_arity(kCategoricalName, args, 1);
    const Eigen::VectorXd& p = as_vector(args[0], ArgRef{kCategoricalName, 1, "p"});
    if (auto why = problem(p)) raise(ErrorKind::kDomain, "{}: argument 1 (p) {}", kCategoricalName, *why);
    return p;
  }
};

}  // namespace

void register_categorical(SpRegistry& r) { r.add(std::make_shared<Categorical>()); }

}  // namespace vnt::stdlib
