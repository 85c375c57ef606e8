// make_beta_bernoulli(alpha, beta): a collapsed coin whose weight, beta(alpha, beta), is integrated out.
// SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <string>

#include "runtime/core/error.hpp"
#include "runtime/sp/registry.hpp"
#include "runtime/sp/sp.hpp"
#include "stdlib/support/made_sp.hpp"

namespace vnt::stdlib {
namespace {

constexpr std::string_view kMakerName = "make_beta_bernoulli";
constexpr std::string_view kCoinName = "beta_bernoulli";

// The sufficient statistics of the incorporated flips.
class CoinAux final : public SpAux {
 public:
  double heads = 0;
  double tails = 0;

  std::unique_ptr<SpAux> clone() const override { return std::make_unique<CoinAux>(*this); }
  bool equals(const SpAux& other) const override {
    const auto* o = dynamic_cast<const CoinAux*>(&other);
    return o && o->heads == heads && o->tails == tails;
  }
  std::string to_string() const override {
    return fmt::format("heads {}, tails {}", vnt::to_string(Value(heads)), vnt::to_string(Value(tails)));
  }
};

// Applications are exchangeable: each one sees the posterior predictive given the counts in the aux.
class Coin final : public Sp {
 public:
  Coin(double alpha, double beta) : alpha_(alpha), beta_(beta) {}

  std::string_view name() const override { return kCoinName; }
  bool is_random() const override { return true; }

  Value simulate(const Args& args, Rng& rng) const override {
    const CoinAux& aux = counts(args);
    double total = alpha_ + beta_ + aux.heads + aux.tails;
    if (std::isfinite(total)) return Value(rng.uniform() * total < alpha_ + aux.heads);
    return Value(rng.uniform() < 1 / (1 + (beta_ + aux.tails) / (alpha_ + aux.heads)));
  }

  double log_density(const Value& x, const Args& args) const override {
    const CoinAux& aux = counts(args);
    int side = outcome(x);
    if (side < 0) return kNegInf;
    double total = alpha_ + beta_ + aux.heads + aux.tails;
    double mine = side == 1 ? alpha_ + aux.heads : beta_ + aux.tails;
    if (std::isfinite(total)) return std::log(mine / total);
    // alpha + beta overflowed (both near the largest double): a ratio of the two counts, which cannot.
    double other = side == 1 ? beta_ + aux.tails : alpha_ + aux.heads;
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

  double alpha_;
  double beta_;
};

class MakeBetaBernoulli final : public Sp {
 public:
  std::string_view name() const override { return kMakerName; }

  Value simulate(const Args& args, Rng& /*rng*/) const override {
    check_arity(kMakerName, args, 2);
    double alpha = positive_param(args, 0, kMakerName, "alpha");
    double beta = positive_param(args, 1, kMakerName, "beta");
    return make_procedure(std::make_shared<Coin>(alpha, beta), std::make_unique<CoinAux>());
  }
};

}  // namespace

void register_beta_bernoulli(SpRegistry& r) { r.add(std::make_shared<MakeBetaBernoulli>()); }

}  // namespace vnt::stdlib
