// make_crp(alpha): a Chinese restaurant process, the partition a Dirichlet process with concentration alpha induces,
// with the process integrated out: each application seats one customer at a table, labelled 0, 1, 2, ...
// SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/sp/registry.hpp"
#include "runtime/sp/sp.hpp"
#include "stdlib/support/made_sp.hpp"

namespace vnt::stdlib {
namespace {

constexpr std::string_view kCrpMakerName = "make_crp";
constexpr std::string_view kCrpName = "crp";
constexpr double kCrpMaxLabel = 9007199254740992.0;  // 2^53: every label below is an exact integer

// The occupied tables and how many customers each seats, and the concentration they were seated with (the maker's
// argument, here so that a move of it reaches every customer without making the restaurant again).
class CrpAux final : public SpAux {
 public:
  explicit CrpAux(double concentration) : alpha(concentration) {}

  std::map<double, double> tables;  // label -> customers (> 0); ordered, so draws walk tables in a fixed order
  double customers = 0;
  double alpha;

  std::unique_ptr<SpAux> clone() const override { return std::make_unique<CrpAux>(*this); }
  bool equals(const SpAux& other) const override {
    const auto* o = dynamic_cast<const CrpAux*>(&other);
    return o && o->tables == tables && o->customers == customers && o->alpha == alpha;
  }
  std::string to_string() const override {
    std::string s;
    for (const auto& [label, n] : tables)
      s += fmt::format("{}{}: {}", s.empty() ? "" : ", ", vnt::to_string(Value(label)), vnt::to_string(Value(n)));
    return "tables {" + s + "}";
  }
  /// The smallest label no table has: where a new table goes. Labels depend only on the occupied tables, never on
  /// the order of past moves, so a state reached twice labels its next table alike.
  double free_label() const {
    double next = 0;
    for (const auto& entry : tables) {
      if (entry.first != next) break;
      ++next;
    }
    return next;
  }
};

// Applications are exchangeable: a customer joins table k with probability n_k / (n + alpha), a new table with
// alpha / (n + alpha), given the n other customers. Which unused label the new table has does not matter: every
// unused label scores alpha / (n + alpha), the same for the label a move leaves and the one it draws.
class Crp final : public Sp {
 public:
  std::string_view name() const override { return kCrpName; }
  bool is_random() const override { return true; }

  Value simulate(const Args& args, Rng& rng) const override {
    const CrpAux& aux = state(args);
    double u = rng.uniform() * (aux.customers + aux.alpha);
    for (const auto& [label, n] : aux.tables) {
      if (u < n) return Value(label);
      u -= n;
    }
    return Value(aux.free_label());
  }

  double log_density(const Value& x, const Args& args) const override {
    const CrpAux& aux = state(args);
    const double* label = table_label(x);
    if (label == nullptr) return kNegInf;
    auto it = aux.tables.find(*label);
    // n + alpha cannot overflow: n < 2^53 is below half an ulp of the largest double.
    return std::log((it == aux.tables.end() ? aux.alpha : it->second) / (aux.customers + aux.alpha));
  }

  /// Tables are exchangeable, so no fixed list of values works for several customers at once: gibbs moves one.
  std::optional<std::vector<Value>> enumerate(const Args& args) const override {
    state(args);
    return std::nullopt;
  }

  /// The occupied tables and one new table: the customer's own if it sits alone (its table, with whatever the
  /// program keeps for it, is then the new table; listing another unused label too would weigh a new table twice).
  std::optional<std::vector<Value>> enumerate_move(const Value& current, const Args& args) const override {
    const CrpAux& aux = state(args);
    std::vector<Value> out;
    out.reserve(aux.tables.size() + 1);
    for (const auto& entry : aux.tables) out.emplace_back(entry.first);
    const double* label = table_label(current);
    auto it = label ? aux.tables.find(*label) : aux.tables.end();
    if (it == aux.tables.end() || it->second > 1) out.emplace_back(aux.free_label());
    return out;
  }

  void incorporate(const Value& x, const Args& args) const override {
    CrpAux& aux = state(args);
    const double* label = table_label(x);
    if (label == nullptr) return;  // not a table: scored -inf and undone, never counted
    aux.tables[*label] += 1;
    aux.customers += 1;
  }

  void unincorporate(const Value& x, const Args& args) const override {
    CrpAux& aux = state(args);
    const double* label = table_label(x);
    if (label == nullptr) return;
    auto it = aux.tables.find(*label);
    VNT_ASSERT(it != aux.tables.end(), "{}: unseating {} from a table it never joined", kCrpName, to_string(x));
    if (--it->second == 0) aux.tables.erase(it);
    aux.customers -= 1;
  }

 private:
  static CrpAux& state(const Args& args) { return made_state<CrpAux>(args, kCrpName, "tables"); }
  // The label x names, if it is one: a whole number in [0, 2^53).
  static const double* table_label(const Value& x) {
    const double* d = std::get_if<double>(&x);
    return d && *d >= 0 && *d < kCrpMaxLabel && std::floor(*d) == *d ? d : nullptr;
  }
};

// Absorbs a change of alpha (absorbing at applications): the restaurant and its customers stay, alpha is set in its
// state, and the maker weighs the whole seating, the Ewens formula alpha^K prod (n_k - 1)! Gamma(alpha) /
// Gamma(alpha + n), whose ratio between two alphas is that of the customers' densities taken one by one.
class MakeCrp final : public Sp {
 public:
  std::string_view name() const override { return kCrpMakerName; }
  bool can_absorb(size_t /*index*/) const override { return true; }

  Value simulate(const Args& args, Rng& /*rng*/) const override {
    check_arity(kCrpMakerName, args, 1);
    const double alpha = positive_param(args, 0, kCrpMakerName, "alpha");
    return make_procedure(std::make_shared<Crp>(), std::make_unique<CrpAux>(alpha));
  }

  double log_density(const Value& made, const Args& args) const override {
    const double alpha = alpha_of(args);
    if (!(alpha > 0) || !std::isfinite(alpha)) return kNegInf;
    const CrpAux& aux = restaurant(made);
    double w = std::lgamma(alpha) - std::lgamma(alpha + aux.customers);
    for (const auto& entry : aux.tables) w += std::log(alpha) + std::lgamma(entry.second);
    return w;
  }

  void incorporate(const Value& made, const Args& args) const override {
    const double alpha = alpha_of(args);
    if (alpha > 0 && std::isfinite(alpha)) restaurant(made).alpha = alpha;  // else scored -inf, and undone
  }

 private:
  static double alpha_of(const Args& args) {
    check_arity(kCrpMakerName, args, 1);
    return as_double(args[0], ArgRef{kCrpMakerName, 1, "alpha"});
  }
  static CrpAux& restaurant(const Value& made) { return state_of_made<CrpAux>(made, kCrpMakerName); }
};

}  // namespace

void register_crp(SpRegistry& r) { r.add(std::make_shared<MakeCrp>()); }

}  // namespace vnt::stdlib
