// make_beta_bernoulli(alpha, beta): a collapsed coin whose weight, beta(alpha, beta), is integrated out.
// SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <string>
#include <utility>

#include "runtime/core/error.hpp"
#include "runtime/sp/registry.hpp"
#include "runtime/sp/sp.hpp"
#include "stdlib/support/made_sp.hpp"

namespace vnt::stdlib {
namespace {

constexpr std::string_view kMakerName = "make_beta_bernoulli";
constexpr std::string_view kCoinName = "beta_bernoulli";

// The sufficient statistics of the incorporated flips, and the prior's parameters they were drawn with (the
// maker's arguments, here so that a move of them reaches every flip without making the coin again).
class CoinAux final : public SpAux {
 public:
  CoinAux(double prior_heads, double prior_tails) : alpha(prior_heads), beta(prior_tails) {}

  double heads = 0;
  double tails = 0;
  double alpha;
  double beta;

  std::unique_ptr<SpAux> clone() const override { return std::make_unique<CoinAux>(*this); }
  bool equals(const SpAux& other) const override {
    const auto* o = dynamic_cast<const CoinAux*>(&other);
    return o && o->heads == heads && o->tails == tails && o->alpha == alpha && o->beta == beta;
  }
  std::string to_string() const override {
    return fmt::format("heads {}, tails {}", vnt::to_string(Value(heads)), vnt::to_string(Value(tails)));
  }
};

// Applications are exchangeable: each one sees the posterior predictive given the counts in the aux.
class Coin final : public Sp {
 public:
  std::string_view name() const override { return kCoinName; }
  bool is_random() const override { return true; }

  Value simulate(const Args& args, Rng& rng) const override {
    const CoinAux& aux = counts(args);
    double total = aux.alpha + aux.beta + aux.heads + aux.tails;
    if (std::isfinite(total)) return Value(rng.uniform() * total < aux.alpha + aux.heads);
    return Value(rng.uniform() < 1 / (1 + (aux.beta + aux.tails) / (aux.alpha + aux.heads)));
  }

  double log_density(const Value& x, const Args& args) const override {
    const CoinAux& aux = counts(args);
    int side = outcome(x);
    return side < 0 ? kNegInf : log_predictive(aux, side == 1);
  }

  /// log P(next flip = heads or tails | the counts).
  static double log_predictive(const CoinAux& aux, bool heads) {
    double total = aux.alpha + aux.beta + aux.heads + aux.tails;
    double mine = heads ? aux.alpha + aux.heads : aux.beta + aux.tails;
    if (std::isfinite(total)) return std::log(mine / total);
    // alpha + beta overflowed (both near the largest double): a ratio of the two counts, which cannot.
    double other = heads ? aux.beta + aux.tails : aux.alpha + aux.heads;
    return -std::log1p(other / mine);
  }

  Value canonical(const Value& x) const override {
    const int side = outcome(x);
    return side < 0 ? x : Value(side == 1);
  }

  std::optional<std::vector<Value>> enumerate(const Args& args) const override {
    counts(args);
    return std::vector<Value>{Value(false), Value(true)};
  }

  void incorporate(const Value& x, const Args& args) const override {
    CoinAux& aux = counts(args);
    int side = outcome(x);
    if (side < 0) return;  // not a flip: scored -inf and undone, never counted
    (side == 1 ? aux.heads : aux.tails) += 1;
  }

  void unincorporate(const Value& x, const Args& args) const override {
    CoinAux& aux = counts(args);
    int side = outcome(x);
    if (side < 0) return;
    double& n = side == 1 ? aux.heads : aux.tails;
    VNT_ASSERT(n > 0, "{}: unincorporating {} that was never incorporated", kCoinName, to_string(x));
    n -= 1;
  }

 private:
  static CoinAux& counts(const Args& args) { return made_state<CoinAux>(args, kCoinName, "counts"); }
  // 1 for heads (true or 1), 0 for tails (false or 0), -1 for anything else.
  static int outcome(const Value& x) {
    if (const bool* b = std::get_if<bool>(&x)) return *b ? 1 : 0;
    if (const double* d = std::get_if<double>(&x)) return *d == 1 ? 1 : *d == 0 ? 0 : -1;
    return -1;
  }

};

// Absorbs a change of alpha or beta (absorbing at applications): the coin and its flips stay, the parameters are set
// in its state, and the maker weighs all the flips at once, B(alpha + heads, beta + tails) / B(alpha, beta), whose
// ratio between two parameter values is that of the flips' densities taken one by one.
class MakeBetaBernoulli final : public Sp {
 public:
  std::string_view name() const override { return kMakerName; }
  bool can_absorb(size_t /*index*/) const override { return true; }

  Value simulate(const Args& args, Rng& /*rng*/) const override {
    check_arity(kMakerName, args, 2);
    double alpha = positive_param(args, 0, kMakerName, "alpha");
    double beta = positive_param(args, 1, kMakerName, "beta");
    return make_procedure(std::make_shared<Coin>(), std::make_unique<CoinAux>(alpha, beta));
  }

  double log_density(const Value& made, const Args& args) const override {
    const auto [alpha, beta] = params(args);
    if (!valid(alpha) || !valid(beta)) return kNegInf;
    const CoinAux& aux = coin(made);
    const double h = aux.heads, t = aux.tails;
    const double w = std::lgamma(alpha + h) + std::lgamma(beta + t) - std::lgamma(alpha + beta + h + t) -
                     (std::lgamma(alpha) + std::lgamma(beta) - std::lgamma(alpha + beta));
    if (std::isfinite(w)) return w;
    // Parameters near the largest double, where lgamma overflows: the flips one by one, which cannot.
    CoinAux seq(alpha, beta);
    double sum = 0;
    for (; seq.heads < h; seq.heads += 1) sum += Coin::log_predictive(seq, true);
    for (; seq.tails < t; seq.tails += 1) sum += Coin::log_predictive(seq, false);
    return sum;
  }

  void incorporate(const Value& made, const Args& args) const override {
    const auto [alpha, beta] = params(args);
    if (!valid(alpha) || !valid(beta)) return;  // scored -inf, and undone
    CoinAux& aux = coin(made);
    aux.alpha = alpha;
    aux.beta = beta;
  }

 private:
  static bool valid(double x) { return x > 0 && std::isfinite(x); }
  static std::pair<double, double> params(const Args& args) {
    check_arity(kMakerName, args, 2);
    return {as_double(args[0], ArgRef{kMakerName, 1, "alpha"}), as_double(args[1], ArgRef{kMakerName, 2, "beta"})};
  }
  static CoinAux& coin(const Value& made) { return state_of_made<CoinAux>(made, kMakerName); }
};

}  // namespace

void register_beta_bernoulli(SpRegistry& r) { r.add(std::make_shared<MakeBetaBernoulli>()); }

}  // namespace vnt::stdlib
