// make_gamma_poisson(a, b): a collapsed Poisson whose rate, gamma(shape a, rate b), is integrated out; each draw is a
// count from the negative binomial posterior predictive. An application may give an exposure t (a time, a
// population): its count is then Poisson of the rate times t.
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
// The largest exposure: the state sums them exactly, and a sum must not overflow.
constexpr double kGpMaxExposure = 1e150;

// The draws' count, the sums of their values and exposures, and the sum of x log t - log x! over them (the
// marginal likelihood's term that does not depend on the prior), all exact sums: a rejected move restores them bit
// for bit. And the prior's parameters the draws were made with (the maker's arguments, here so that a move of them
// reaches every draw).
class GammaPoissonAux final : public SpAux {
 public:
  GammaPoissonAux(double prior_a, double prior_b) : a(prior_a), b(prior_b) {}

  double a, b;
  double n = 0;
  ExactSum sum, exposure, log_base;

  std::unique_ptr<SpAux> clone() const override { return std::make_unique<GammaPoissonAux>(*this); }
  bool equals(const SpAux& other) const override {
    const auto* o = dynamic_cast<const GammaPoissonAux*>(&other);
    return o && o->a == a && o->b == b && o->n == n && o->sum == sum && o->exposure == exposure &&
           o->log_base == log_base;
  }
  std::string to_string() const override {
    return fmt::format("n {}, sum {}, exposure {}", vnt::to_string(Value(n)), vnt::to_string(Value(sum.value())),
                       vnt::to_string(Value(exposure.value())));
  }
};

bool gp_count(const Value& x, double* out) {
  const double* d = std::get_if<double>(&x);
  if (d == nullptr || !(*d >= 0 && *d <= kGpMaxCount) || *d != std::floor(*d)) return false;
  *out = *d;
  return true;
}

/// log of the negative binomial Gamma(a + x) / (Gamma(a) x!) (b / (b + t))^a (t / (b + t))^x, the predictive of
/// the count x at exposure t with the rate's posterior gamma(a, b); Gamma(a + x) / (Gamma(a) x!) = 1 / (x B(a, x)),
/// which stays accurate for any a and x (lgamma's differences cancel for large ones).
double gp_log_predictive(double a, double b, double t, double x) {
  const double tail = -a * std::log1p(t / b);
  if (x == 0) return tail;
  return -log_beta(a, x) - std::log(x) + tail + x * (std::log(t) - std::log(b + t));
}

/// An application's exposure, its operand if it has one (kType if not a number), else 1; 0 if it is not in
/// (0, 1e150] (which has probability zero, and which simulate refuses).
double gp_exposure(const Args& args) {
  if (args.size() == 0) return 1;
  const double t = as_double(args[0], ArgRef{kGpName, 1, "exposure"});
  return t > 0 && t <= kGpMaxExposure ? t : 0;
}

// Applications are exchangeable: each one sees the predictive given the counts in the aux.
class GammaPoisson final : public Sp {
 public:
  std::string_view name() const override { return kGpName; }
  bool is_random() const override { return true; }

  Value simulate(const Args& args, Rng& rng) const override {
    const GammaPoissonAux& aux = state(args);
    const double t = args.size() == 0 ? 1 : positive_param(args, 0, kGpName, "exposure");
    if (t > kGpMaxExposure)
      raise(ErrorKind::kDomain, "{}: argument 1 (exposure) is {}, but must be at most 1e150", kGpName,
            to_string(args[0]));
    const auto [a, b] = posterior(aux);
    // rate = t (a / b) g, g ~ gamma(a, a) of mean 1, in logarithms: a / b may overflow, and g underflow.
    const double g = unit_gamma_draw(rng, a);
    if (!(g > 0)) return Value(0.0);
    const double rate = std::exp(std::log(t) + std::log(a) - std::log(b) + std::log(g));
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
    const double t = gp_exposure(args);
    if (!gp_count(x, &k) || t == 0) return kNegInf;
    const auto [a, b] = posterior(aux);
    return gp_log_predictive(a, b, t, k);
  }

  void incorporate(const Value& x, const Args& args) const override {
    GammaPoissonAux& aux = state(args);
    double k = 0;
    const double t = gp_exposure(args);
    if (!gp_count(x, &k) || t == 0) return;  // scored -inf and undone, never counted
    aux.n += 1;
    aux.sum.add(k);
    aux.exposure.add(t);
    aux.log_base.add(log_base(k, t));
  }

  void unincorporate(const Value& x, const Args& args) const override {
    GammaPoissonAux& aux = state(args);
    double k = 0;
    const double t = gp_exposure(args);
    if (!gp_count(x, &k) || t == 0) return;
    VNT_ASSERT(aux.n > 0, "{}: unincorporating {} that was never incorporated", kGpName, to_string(x));
    aux.n -= 1;
    aux.sum.add(-k);
    aux.exposure.add(-t);
    aux.log_base.add(-log_base(k, t));
  }

  /// The rate's posterior, gamma(a + sum of counts, b + sum of exposures).
  static std::pair<double, double> posterior(const GammaPoissonAux& aux) {
    return {aux.a + aux.sum.value(), aux.b + aux.exposure.value()};
  }

 private:
  static GammaPoissonAux& state(const Args& args) {
    return made_state<GammaPoissonAux>(args, kGpName, "counts", /*max_operands=*/1);
  }
  static double log_base(double k, double t) { return (k == 0 ? 0 : k * std::log(t)) - std::lgamma(k + 1); }
};

// Absorbs a change of a or b (absorbing at applications): the procedure and its draws stay, the parameters are set
// in its state, and the maker weighs all the draws at once by their marginal likelihood,
// Gamma(a + s) / Gamma(a) b^a / (b + T)^(a + s) prod t_i^x_i / x_i! (s their sum, T that of their exposures).
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
    const double s = aux.sum.value(), total = aux.exposure.value();
    // Gamma(a + s) / Gamma(a) = Gamma(s) / B(a, s) for s > 0; b^a / (b + T)^(a + s) without the powers.
    const double gammas = s == 0 ? 0 : std::lgamma(s) - log_beta(a, s);
    const double w = gammas - a * std::log1p(total / b) - s * std::log(b + total) + aux.log_base.value();
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
