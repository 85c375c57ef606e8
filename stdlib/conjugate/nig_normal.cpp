// make_nig_normal(m, V, a, b): a collapsed normal whose mean and variance, mu | sigma^2 ~ normal(m, sigma^2 V) and
// sigma^2 ~ inv_gamma(a, b), are integrated out; each draw is from the Student-t posterior predictive.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "runtime/core/error.hpp"
#include "runtime/sp/registry.hpp"
#include "runtime/sp/sp.hpp"
#include "stdlib/support/exact_sum.hpp"
#include "stdlib/support/large_gamma.hpp"
#include "stdlib/support/made_sp.hpp"

namespace vnt::stdlib {
namespace {

constexpr std::string_view kNigMakerName = "make_nig_normal";
constexpr std::string_view kNigName = "nig_normal";
// Beyond this a value's square would overflow the sum of squares: such a value has density 0, and m must be within.
constexpr double kNigMaxAbs = 1e150;
// The largest value a draw may take: one further out (a scale that overflowed) is clamped here, kept in the support.
const double kNigMaxDraw = std::nextafter(kNigMaxAbs, 0.0);

struct NigParams {
  double m, v, a, b;
  bool operator==(const NigParams&) const = default;
};

// The draws' count, sum and sum of squares (exact sums: a rejected move restores them bit for bit), and the prior's
// parameters they were drawn with (the maker's arguments, here so that a move of them reaches every draw without
// making the procedure again).
class NigAux final : public SpAux {
 public:
  explicit NigAux(NigParams p) : prior(p) {}

  NigParams prior;
  double n = 0;
  ExactSum sum, sum_sq;

  std::unique_ptr<SpAux> clone() const override { return std::make_unique<NigAux>(*this); }
  bool equals(const SpAux& other) const override {
    const auto* o = dynamic_cast<const NigAux*>(&other);
    return o && o->prior == prior && o->n == n && o->sum == sum && o->sum_sq == sum_sq;
  }
  std::string to_string() const override {
    return fmt::format("n {}, sum {}, sum of squares {}", vnt::to_string(Value(n)), vnt::to_string(Value(sum.value())),
                       vnt::to_string(Value(sum_sq.value())));
  }
};

/// The posterior's parameters given the draws: mu | sigma^2 ~ normal(m, sigma^2 v), sigma^2 ~ inv_gamma(a, b).
NigParams posterior(const NigAux& aux, const NigParams& p) {
  if (aux.n == 0) return p;
  const double n = aux.n, s = aux.sum.value(), mean = s / n;
  const double v = p.v / (1 + n * p.v);
  const double m = v * (p.m / p.v + s);
  // The spread about the draws' mean, then the mean's distance from the prior's: no difference of large terms.
  const double spread = std::max(0.0, aux.sum_sq.value() - s * mean);
  const double shift = mean - p.m;
  return {m, v, p.a + n / 2, p.b + 0.5 * spread + 0.5 * n / (1 + n * p.v) * shift * shift};
}

bool finite_value(const Value& x, double* out) {
  const double* d = std::get_if<double>(&x);
  if (d == nullptr || !(std::abs(*d) < kNigMaxAbs)) return false;
  *out = *d;
  return true;
}

// Applications are exchangeable: each one sees the posterior predictive given the draws in the aux, a Student-t
// with 2a' degrees of freedom, location m' and scale^2 b' (1 + V') / a'.
class NigNormal final : public Sp {
 public:
  std::string_view name() const override { return kNigName; }
  bool is_random() const override { return true; }

  Value simulate(const Args& args, Rng& rng) const override {
    const NigAux& aux = state(args);
    const NigParams q = posterior(aux, aux.prior);
    // sigma^2 = b' / g with g ~ gamma(a', 1); then x ~ normal(m', sigma^2 (1 + V')), the scale in logarithms (a tiny
    // a' draws a g that underflows, a huge b' a product that overflows).
    const double log_g = std::log(unit_gamma_draw(rng, q.a)) + std::log(q.a);
    const double sd = std::exp(0.5 * (std::log(q.b) + std::log1p(q.v) - log_g));
    const double x = q.m + sd * rng.normal();
    return Value(std::isnan(x) ? q.m : std::clamp(x, -kNigMaxDraw, kNigMaxDraw));
  }

  double log_density(const Value& x, const Args& args) const override {
    const NigAux& aux = state(args);
    double y = 0;
    return finite_value(x, &y) ? log_predictive(posterior(aux, aux.prior), y) : kNegInf;
  }

  /// log of the Student-t density with 2a' degrees of freedom, location m', scale^2 b' (1 + V') / a', in logarithms:
  /// any positive finite parameters, however large or small, give a finite density to a value in the support.
  static double log_predictive(const NigParams& q, double y) {
    const double nu = 2 * q.a, log_scale_sq = std::log(q.b) + std::log1p(q.v) - std::log(q.a);
    const double z = std::abs(y - q.m);
    // log(1 + z^2 / (nu scale^2)), from the logarithm of the ratio: z^2 alone may overflow.
    const double log_ratio = 2 * std::log(z) - std::log(nu) - log_scale_sq;
    const double log1p_ratio = log_ratio > 36 ? log_ratio + std::exp(-log_ratio) : std::log1p(std::exp(log_ratio));
    return std::lgamma((nu + 1) / 2) - std::lgamma(nu / 2) -
           0.5 * (std::log(nu) + std::log(std::numbers::pi) + log_scale_sq) - (nu + 1) / 2 * log1p_ratio;
  }

  void incorporate(const Value& x, const Args& args) const override {
    NigAux& aux = state(args);
    double y = 0;
    if (!finite_value(x, &y)) return;  // scored -inf and undone, never counted
    aux.n += 1;
    aux.sum.add(y);
    aux.sum_sq.add(y * y);
  }

  void unincorporate(const Value& x, const Args& args) const override {
    NigAux& aux = state(args);
    double y = 0;
    if (!finite_value(x, &y)) return;
    VNT_ASSERT(aux.n > 0, "{}: unincorporating {} that was never incorporated", kNigName, to_string(x));
    aux.n -= 1;
    aux.sum.add(-y);
    aux.sum_sq.add(-(y * y));
  }

 private:
  static NigAux& state(const Args& args) { return made_state<NigAux>(args, kNigName, "statistics"); }
};

// Absorbs a change of m, V, a or b (absorbing at applications): the procedure and its draws stay, the parameters are
// set in its state, and the maker weighs all the draws at once by their marginal likelihood,
// Gamma(a') / Gamma(a) b^a / b'^a' sqrt(V' / V) (2 pi)^(-n/2).
class MakeNigNormal final : public Sp {
 public:
  std::string_view name() const override { return kNigMakerName; }
  bool can_absorb(size_t /*index*/) const override { return true; }

  Value simulate(const Args& args, Rng& /*rng*/) const override {
    check_arity(kNigMakerName, args, 4);
    const double m = as_double(args[0], ArgRef{kNigMakerName, 1, "m"});
    if (!(std::abs(m) < kNigMaxAbs))
      raise(ErrorKind::kDomain, "{}: argument 1 (m) is {}, but must be between -1e150 and 1e150", kNigMakerName,
            to_string(args[0]));
    const NigParams p{m, positive_param(args, 1, kNigMakerName, "V"), positive_param(args, 2, kNigMakerName, "a"),
                      positive_param(args, 3, kNigMakerName, "b")};
    return make_procedure(std::make_shared<NigNormal>(), std::make_unique<NigAux>(p));
  }

  double log_density(const Value& made, const Args& args) const override {
    const NigParams p = params(args);
    if (!valid(p)) return kNegInf;
    const NigAux& aux = nig(made);
    if (aux.n == 0) return 0;
    const NigParams q = posterior(aux, p);
    const double w = std::lgamma(q.a) - std::lgamma(p.a) + p.a * std::log(p.b) - q.a * std::log(q.b) +
                     0.5 * (std::log(q.v) - std::log(p.v)) - aux.n / 2 * std::log(2 * std::numbers::pi);
    return std::isnan(w) ? kNegInf : w;
  }

  void incorporate(const Value& made, const Args& args) const override {
    const NigParams p = params(args);
    if (!valid(p)) return;  // scored -inf, and undone
    nig(made).prior = p;
  }

 private:
  static bool valid(const NigParams& p) {
    auto positive = [](double x) { return x > 0 && std::isfinite(x); };
    return std::abs(p.m) < kNigMaxAbs && positive(p.v) && positive(p.a) && positive(p.b);
  }
  static NigParams params(const Args& args) {
    check_arity(kNigMakerName, args, 4);
    return {as_double(args[0], ArgRef{kNigMakerName, 1, "m"}), as_double(args[1], ArgRef{kNigMakerName, 2, "V"}),
            as_double(args[2], ArgRef{kNigMakerName, 3, "a"}), as_double(args[3], ArgRef{kNigMakerName, 4, "b"})};
  }
  static NigAux& nig(const Value& made) { return state_of_made<NigAux>(made, kNigMakerName); }
};

}  // namespace

void register_nig_normal(SpRegistry& r) { r.add(std::make_shared<MakeNigNormal>()); }

}  // namespace vnt::stdlib
