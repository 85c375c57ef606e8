// make_dir_cat(alpha) and make_sym_dir_cat(a, K): a collapsed categorical over 0 .. K-1 whose probabilities,
// dirichlet(alpha) (every alpha_k = a for the symmetric one), are integrated out.
// SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/sp/registry.hpp"
#include "runtime/sp/sp.hpp"
#include "stdlib/support/deterministic.hpp"
#include "stdlib/support/made_sp.hpp"

namespace vnt::stdlib {
namespace {

constexpr std::string_view kDirCatMakerName = "make_dir_cat";
constexpr std::string_view kSymDirCatMakerName = "make_sym_dir_cat";
constexpr std::string_view kDieName = "dir_cat";

// How many draws fell in each category, and the prior's concentrations they were drawn with (the maker's
// arguments, here so that a move of them reaches every draw without making the procedure again).
class DieAux final : public SpAux {
 public:
  explicit DieAux(std::vector<double> concentrations) : counts(concentrations.size(), 0.0) {
    set_alpha(std::move(concentrations));
  }

  std::vector<double> alpha;
  std::vector<double> counts;  // as long as alpha
  double draws = 0;
  double alpha_sum = 0;  // of alpha (+inf if it overflows)

  void set_alpha(std::vector<double> a) {
    alpha = std::move(a);
    alpha_sum = 0;
    for (double x : alpha) alpha_sum += x;
  }

  std::unique_ptr<SpAux> clone() const override { return std::make_unique<DieAux>(*this); }
  bool equals(const SpAux& other) const override {
    const auto* o = dynamic_cast<const DieAux*>(&other);
    return o && o->alpha == alpha && o->counts == counts && o->draws == draws && o->alpha_sum == alpha_sum;
  }
  std::string to_string() const override {
    std::string s;
    for (size_t k = 0; k < counts.size(); ++k)
      s += fmt::format("{}{}", k == 0 ? "" : " ", vnt::to_string(Value(counts[k])));
    return "counts [" + s + "]";
  }
};

/// The category index x stands for (a number 0 .. k-1), or nullopt.
std::optional<size_t> category(const Value& x, size_t k) {
  const double* d = std::get_if<double>(&x);
  if (d == nullptr || !(*d >= 0) || *d != std::floor(*d) || *d >= static_cast<double>(k)) return std::nullopt;
  return static_cast<size_t>(*d);
}

// The concentrations' sum overflows when entries are near the largest double: the weights are then scaled down.
constexpr double kScale = 0x1p-64;

/// The weights alpha_k + n_k are scaled by this, and their total: the total finite.
std::pair<double, double> scale_and_total(const DieAux& aux) {
  const double total = aux.alpha_sum + aux.draws;
  if (std::isfinite(total)) return {1.0, total};
  double scaled = 0;
  for (size_t j = 0; j < aux.alpha.size(); ++j) scaled += (aux.alpha[j] + aux.counts[j]) * kScale;
  return {kScale, scaled};
}

/// log P(next draw = k | the counts): (alpha_k + n_k) / (sum alpha + n).
double log_predictive(const DieAux& aux, size_t k) {
  const auto [scale, total] = scale_and_total(aux);
  return std::log((aux.alpha[k] + aux.counts[k]) * scale / total);
}

// Applications are exchangeable: each one sees the posterior predictive given the counts in the aux.
class Die final : public Sp {
 public:
  std::string_view name() const override { return kDieName; }
  bool is_random() const override { return true; }

  Value simulate(const Args& args, Rng& rng) const override {
    const DieAux& aux = state(args);
    const auto [scale, total] = scale_and_total(aux);
    double u = rng.uniform() * total;
    for (size_t k = 0; k + 1 < aux.alpha.size(); ++k) {
      const double w = (aux.alpha[k] + aux.counts[k]) * scale;
      if (u < w) return Value(static_cast<double>(k));
      u -= w;
    }
    return Value(static_cast<double>(aux.alpha.size() - 1));  // also where rounding left u past the last weight
  }

  double log_density(const Value& x, const Args& args) const override {
    const DieAux& aux = state(args);
    const std::optional<size_t> k = category(x, aux.alpha.size());
    return k ? log_predictive(aux, *k) : kNegInf;
  }

  std::optional<std::vector<Value>> enumerate(const Args& args) const override {
    const DieAux& aux = state(args);
    std::vector<Value> out;
    out.reserve(aux.alpha.size());
    for (size_t k = 0; k < aux.alpha.size(); ++k) out.emplace_back(static_cast<double>(k));
    return out;
  }

  void incorporate(const Value& x, const Args& args) const override {
    DieAux& aux = state(args);
    const std::optional<size_t> k = category(x, aux.alpha.size());
    if (!k) return;  // not a category: scored -inf and undone, never counted
    aux.counts[*k] += 1;
    aux.draws += 1;
  }

  void unincorporate(const Value& x, const Args& args) const override {
    DieAux& aux = state(args);
    const std::optional<size_t> k = category(x, aux.alpha.size());
    if (!k) return;
    VNT_ASSERT(aux.counts[*k] > 0, "{}: unincorporating {} that was never incorporated", kDieName, to_string(x));
    aux.counts[*k] -= 1;
    aux.draws -= 1;
  }

 private:
  static DieAux& state(const Args& args) { return made_state<DieAux>(args, kDieName, "counts"); }
};

/// log of the probability of the draws the aux counts, in any order, under concentrations `alpha`: the ratio
/// Gamma(A) / Gamma(A + n) prod Gamma(alpha_k + n_k) / Gamma(alpha_k), A their sum. -inf if a category past the end
/// of `alpha` holds a draw.
double log_marginal(const DieAux& aux, const std::vector<double>& alpha) {
  for (size_t k = alpha.size(); k < aux.counts.size(); ++k)
    if (aux.counts[k] > 0) return kNegInf;
  double a_sum = 0, w = 0;
  for (size_t k = 0; k < alpha.size(); ++k) {
    const double n = k < aux.counts.size() ? aux.counts[k] : 0;
    a_sum += alpha[k];
    if (n > 0) w += std::lgamma(alpha[k] + n) - std::lgamma(alpha[k]);
  }
  w += std::lgamma(a_sum) - std::lgamma(a_sum + aux.draws);
  if (std::isfinite(w)) return w;
  // Concentrations where lgamma overflows: the draws one by one, which cannot.
  DieAux seq(alpha);
  double sum = 0;
  for (size_t k = 0; k < alpha.size() && k < aux.counts.size(); ++k)
    for (; seq.counts[k] < aux.counts[k]; seq.counts[k] += 1, seq.draws += 1) sum += log_predictive(seq, k);
  return sum;
}

bool valid(const std::vector<double>& alpha) {
  if (alpha.empty()) return false;
  for (double a : alpha)
    if (!(a > 0) || !std::isfinite(a)) return false;
  return true;
}

/// Sets the concentrations the applications read, the counts growing or shrinking with them (a move that drops a
/// category holding a draw has density 0 and is undone before anything reads the aux).
void set_alpha(DieAux& aux, std::vector<double> alpha) {
  if (!valid(alpha)) return;  // scored -inf, and undone
  aux.counts.resize(alpha.size(), 0.0);
  aux.set_alpha(std::move(alpha));
}

// Both makers absorb a change of the concentrations (absorbing at applications): the procedure and its draws stay,
// the new concentrations are set in its state, and the maker weighs all the draws at once (log_marginal), whose
// ratio between two values of the parameters is that of the draws' densities taken one by one.
class MakeDirCat final : public Sp {
 public:
  std::string_view name() const override { return kDirCatMakerName; }
  bool can_absorb(size_t /*index*/) const override { return true; }

  Value simulate(const Args& args, Rng& /*rng*/) const override {
    std::vector<double> alpha = concentrations(args);
    if (alpha.empty())
      raise(ErrorKind::kDomain, "{}: argument 1 (alpha) is empty, but must have at least one element",
            kDirCatMakerName);
    for (size_t k = 0; k < alpha.size(); ++k)
      if (!(alpha[k] > 0) || !std::isfinite(alpha[k]))
        raise(ErrorKind::kDomain,
              "{}: argument 1 (alpha) at index {} is {}, but each concentration must be positive and finite",
              kDirCatMakerName, k, to_string(Value(alpha[k])));
    return make_procedure(std::make_shared<Die>(), std::make_unique<DieAux>(std::move(alpha)));
  }

  double log_density(const Value& made, const Args& args) const override {
    const std::vector<double> alpha = concentrations(args);
    return valid(alpha) ? log_marginal(die(made), alpha) : kNegInf;
  }

  void incorporate(const Value& made, const Args& args) const override { set_alpha(die(made), concentrations(args)); }

 private:
  static std::vector<double> concentrations(const Args& args) {
    check_arity(kDirCatMakerName, args, 1);
    const Eigen::VectorXd& v = as_vector(args[0], ArgRef{kDirCatMakerName, 1, "alpha"});
    return {v.data(), v.data() + v.size()};
  }
  static DieAux& die(const Value& made) { return state_of_made<DieAux>(made, kDirCatMakerName); }
};

// make_sym_dir_cat(a, K): a change of K makes the procedure again (its draws with it); of a, it absorbs.
class MakeSymDirCat final : public Sp {
 public:
  std::string_view name() const override { return kSymDirCatMakerName; }
  bool can_absorb(size_t index) const override { return index == 0; }

  Value simulate(const Args& args, Rng& /*rng*/) const override {
    check_arity(kSymDirCatMakerName, args, 2);
    const double a = positive_param(args, 0, kSymDirCatMakerName, "a");
    const Call c(kSymDirCatMakerName, args);
    const int64_t k = c.size_at_most(1, kMaxElements);
    if (k == 0) c.fail_domain(1, "must be at least 1");
    return make_procedure(std::make_shared<Die>(),
                          std::make_unique<DieAux>(std::vector<double>(static_cast<size_t>(k), a)));
  }

  double log_density(const Value& made, const Args& args) const override {
    const DieAux& aux = die(made);
    const std::vector<double> alpha = concentrations(args, aux.alpha.size());
    return valid(alpha) ? log_marginal(aux, alpha) : kNegInf;
  }

  void incorporate(const Value& made, const Args& args) const override {
    DieAux& aux = die(made);
    set_alpha(aux, concentrations(args, aux.alpha.size()));
  }

 private:
  // K does not change here: a change of it is not absorbed (can_absorb), so the procedure is made again.
  static std::vector<double> concentrations(const Args& args, size_t k) {
    check_arity(kSymDirCatMakerName, args, 2);
    return std::vector<double>(k, as_double(args[0], ArgRef{kSymDirCatMakerName, 1, "a"}));
  }
  static DieAux& die(const Value& made) { return state_of_made<DieAux>(made, kSymDirCatMakerName); }
};

}  // namespace

void register_dir_cat(SpRegistry& r) {
  r.add(std::make_shared<MakeDirCat>());
  r.add(std::make_shared<MakeSymDirCat>());
}

}  // namespace vnt::stdlib
