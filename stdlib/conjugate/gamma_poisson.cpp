// make_gamma_poisson(a, b): a collapsed Poisson whose rate, gamma(shape a, rate b), is integrated out; each draw is a
// count from the negative binomial posterior predictive.
// SPDX-License-Identifier: Apache-2.0
#include <boost/random/poisson_distribution.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "runtime/core/error.hpp"
#include "runtime/sp/registry.hpp"
#include "runtime/sp/sp.hpp"
#include "stdlib/support/exact_sum.hpp"
#include "stdlib/support/large_gamma.hpp"
#include "stdlib/support/made_sp.hpp"

namespace vnt::stdlib {
namespace {

constexpr std::string_view kGpMakerName = "make_gamma_poisson";
constexpr std::string_view kGpName = "gamma_poisson";
// Counts up to 2^53, the integers a double holds exactly; a larger value has density 0.
constexpr double kGpMaxCount = 9007199254740992.0;
// Above this rate a Poisson draw is the normal approximation (skewness 1e-6; Boost's sampler drifts there, see
// stdlib/dist/poisson.cpp).
constexpr double kGpMaxExactRate = 1e12;

// The draws' count and sum, and the sum of their log factorials (the marginal likelihood's term that does not
// depend on the prior), all exact sums: a rejected move restores them bit for bit. And the prior's parameters the
// draws were made with (the maker's arguments, here so that a move of them reaches every draw).
class GammaPoissonAux final : public SpAux {
 public:
  GammaPoissonAux(double prior_a, double prior_b) : a(prior_a), b(prior_b) {}

  double a, b;
  double n = 0;
  ExactSum sum, log_factorials;

  std::unique_ptr<SpAux> clone() const override { return std::make_unique<GammaPoissonAux>(*this); }
  bool equals(const SpAux& other) const override {
    const auto* o = dynamic_cast<const GammaPoissonAux*>(&other);
    return o && o->a == a && o->b == b && o->n == n && o->sum == sum && o->log_factorials == log_factorials;
  }
  std::string to_string() const override {
    return fmt::format("n {}, sum {}", vnt::to_string(Value(n)), vnt::to_string(Value(sum.value())));
  }
};

bool gp_count(const Value& x, double* out) {
  const double* d = std::get_if<double>(&x);
  if (d == nullptr || !(*d >= 0 && *d <= kGpMaxCount) || *d != std::floor(*d)) return false;
  *out = *d;
  return true;
}

/// log of the negative binomial Gamma(a + x) / (Gamma(a) x!) (b / (b + 1))^a (1 / (b + 1))^x, the count x's
/// predictive with the rate's posterior gamma(a, b); Gamma(a + x) / (Gamma(a) x!) = 1 / (x B(a, x)), which stays
/// accurate for any a and x (lgamma's differences cancel for large ones).
double gp_log_predictive(double a, double b, double x) {
  const double tail = -a * std::log1p(1 / b);
  if (x == 0) return tail;
  return -log_beta(a, x) - std::log(x) + tail - x * std::log1p(b);
}

// Applications are exchangeable: each one sees the predictive given the counts in the aux.
class GammaPoisson final : public Sp {
 public:
  std::string_view name() const override { return kGpName; }
  bool is_random() const override { return true; }

  Value simulate(const Args& args, Rng& rng) const override {
    const GammaPoissonAux& aux = state(args);
    const auto [a, b] = posterior(aux);
    // rate = (a / b) g, g ~ gamma(a, a) of mean 1, in logarithms: a / b may overflow, and g underflow.
    const double g = unit_gamma_draw(rng, a);
    if (!(g > 0)) return Value(0.0);
    const double rate = std::exp(std::log(a) - std::log(b) + std::log(g));
    if (!(rate > 0)) return Value(0.0);
    if (rate <= kGpMaxExactRate)
      return Value(static_cast<double>(boost::random::poisson_distribution<int64_t, double>(rate)(rng.engine())));
    if (!(rate < kGpMaxCount)) return Value(kGpMaxCount);  // the support's end (an overflowing rate too)
    const double x = std::round(rate + std::sqrt(rate) * rng.normal());
    return Value(std::clamp(x, 0.0, kGpMaxCount));
  }

  double log_density(const Value& x, const Args& args) const override {
    const GammaPoissonAux& aux = state(args);
    double k = 0;
    if (!gp_count(x, &k)) return kNegInf;
    const auto [a, b] = posterior(aux);
    return gp_log_predictive(a, b, k);
  }

  void incorporate(const Value& x, const Args& args) const override {
    GammaPoissonAux& aux = state(args);
    double k = 0;
    if (!gp_count(x, &k)) return;  // scored -inf and undone, never counted
    aux.n += 1;
    aux.sum.add(k);
    aux.log_factorials.add(std::lgamma(k + 1));
  }

  void unincorporate(const Value& x, const Args& args) const override {
    GammaPoissonAux& aux = state(args);
    double k = 0;
    if (!gp_count(x, &k)) return;
    VNT_ASSERT(aux.n > 0, "{}: unincorporating {} that was never incorporated", kGpName, to_string(x));
    aux.n -= 1;
    aux.sum.add(-k);
    aux.log_factorials.add(-std::lgamma(k + 1));
  }

  /// The rate's posterior, gamma(a + sum, b + n).
  static std::pair<double, double> posterior(const GammaPoissonAux& aux) {
    return {aux.a + aux.sum.value(), aux.b + aux.n};
  }

 private:
  static GammaPoissonAux& state(const Args& args) { return made_state<GammaPoissonAux>(args, kGpName, "counts"); }
};

// Absorbs a change of a or b (absorbing at applications): the procedure and its draws stay, the parameters are set
// in its state, and the maker weighs all the draws at once by their marginal likelihood,
// Gamma(a + s) / Gamma(a) b^a / (b + n)^(a + s) / prod x_i!.
class MakeGammaPoisson final : public Sp {
 public:
  std::string_view name() const override { return kGpMakerName; }
  bool can_absorb(size_t /*index*/) const override { return true; }

  Value simulate(const Args& args, Rng& /*rng*/) const override {
    check_arity(kGpMakerName, args, 2);
    const double a = positive_param(args, 0, kGpMakerName, "a");
    const double b = positive_param(args, 1, kGpMakerName, "b");
    return make_procedure(std::make_shared<GammaPoisson>(), std::make_unique<GammaPoissonAux>(a, b));
  }

  double log_density(const Value& made, const Args& args) const override {
    const auto [a, b] = params(args);
    if (!valid(a) || !valid(b)) return kNegInf;
    const GammaPoissonAux& aux = counts(made);
    if (aux.n == 0) return 0;
    const double s = aux.sum.value();
    // Gamma(a + s) / Gamma(a) = Gamma(s) / B(a, s) for s > 0; b^a / (b + n)^(a + s) without the powers.
    const double gammas = s == 0 ? 0 : std::lgamma(s) - log_beta(a, s);
    const double w = gammas - a * std::log1p(aux.n / b) - s * std::log(b + aux.n) - aux.log_factorials.value();
    return std::isnan(w) ? kNegInf : w;
  }

  void incorporate(const Value& made, const Args& args) const override {
    const auto [a, b] = params(args);
    if (!valid(a) || !valid(b)) return;  // scored -inf, and undone
    GammaPoissonAux& aux = counts(made);
    aux.a = a;
    aux.b = b;
  }

 private:
  static bool valid(double x) { return x > 0 && std::isfinite(x); }
  static std::pair<double, double> params(const Args& args) {
    check_arity(kGpMakerName, args, 2);
    return {as_double(args[0], ArgRef{kGpMakerName, 1, "a"}), as_double(args[1], ArgRef{kGpMakerName, 2, "b"})};
  }
  static GammaPoissonAux& counts(const Value& made) { return state_of_made<GammaPoissonAux>(made, kGpMakerName); }
};

}  // namespace

void register_gamma_poisson(SpRegistry& r) { r.add(std::make_shared<MakeGammaPoisson>()); }

}  // namespace vnt::stdlib
