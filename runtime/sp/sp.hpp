// Stochastic procedures: simulate, log density, absorbing, and auxiliary state for exchangeable coupling.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/rng.hpp"
#include "runtime/sp/args.hpp"
#include "runtime/value/value.hpp"

namespace vnt {

inline constexpr double kNegInf = -std::numeric_limits<double>::infinity();
inline constexpr double kPosInf = std::numeric_limits<double>::infinity();

/// Mutable state shared by all applications of a made SP (e.g. the counts of a collapsed coin).
class SpAux {
 public:
  virtual ~SpAux() = default;
  virtual std::unique_ptr<SpAux> clone() const = 0;
  virtual bool equals(const SpAux& other) const = 0;
  virtual std::string to_string() const = 0;
};

/// A primitive stochastic (or deterministic) procedure. Stateless: per-application state lives in the trace,
/// shared state of made SPs in their SpAux. SPs throw vnt::Error without a position; the trace adds it.
class Sp {
 public:
  virtual ~Sp() = default;

  virtual std::string_view name() const = 0;
  /// Random SPs are random choices in the trace and can be proposed to.
  virtual bool is_random() const { return false; }
  /// Draws (random) or computes (deterministic) the output. Checks arity, types and parameter domains:
  /// throws kArity, kType or kDomain.
  virtual Value simulate(const Args& args, Rng& rng) const = 0;
  /// log p(x | args). Returns -inf outside the support or for parameters outside their domain;
  /// throws kArity/kType for malformed arguments.
  virtual double log_density(const Value& /*x*/, const Args& /*args*/) const { return 0.0; }
  /// An observed value as this SP's outputs hold it, where log_density reads it as one (flip observed at 1 holds
  /// true, normal observed at true holds 1); anything else as it is. What an observation stores is then a value the
  /// SP could have drawn, for every later reader and kernel.
  virtual Value canonical(const Value& x) const { return x; }
  /// Whether an application keeps its output and only re-scores it when operand `index` changes. A maker of
  /// procedures with state that says so (absorbing at applications) keeps the procedure it made: log_density(made,
  /// args) weighs all the procedure's applications under `args`, and incorporate(made, args) sets `args` in its state.
  virtual bool can_absorb(size_t /*index*/) const { return is_random(); }
  /// Whether outputs are reals (numbers or vectors of reals), so a Gaussian drift proposal applies.
  virtual bool real_valued() const { return false; }
  /// The finite support given these arguments, for enumerative Gibbs; nullopt if not enumerable.
  virtual std::optional<std::vector<Value>> enumerate(const Args& /*args*/) const { return std::nullopt; }
  /// The values enumerative Gibbs weighs when it moves this application alone, its output `current` still counted in
  /// args.aux(). By default enumerate(args); a CRP lists one new table, the customer's own when it sits alone.
  virtual std::optional<std::vector<Value>> enumerate_move(const Value& /*current*/, const Args& args) const {
    return enumerate(args);
  }
  /// For a deterministic SP whose output is a probability logistic(z): z itself, from the same arguments, so a
  /// consumer can score an outcome the rounded probability calls impossible (Args::log_odds).
  virtual std::optional<double> log_odds(const Args& /*args*/) const { return std::nullopt; }
  /// Adds/removes one output to/from the made SP's auxiliary state (args.aux()). Called with values of
  /// probability zero too (an impossible observation is incorporated, scored -inf, then undone), so both must
  /// treat such a value alike: ignore it, or count it.
  virtual void incorporate(const Value& /*x*/, const Args& /*args*/) const {}
  virtual void unincorporate(const Value& /*x*/, const Args& /*args*/) const {}
};

/// A primitive or made SP as a first-class value. A made SP owns its auxiliary state.
class SpProcedure final : public Procedure {
 public:
  explicit SpProcedure(std::shared_ptr<const Sp> sp, std::unique_ptr<SpAux> aux = nullptr)
      : Procedure(Kind::kPrimitive), sp_(std::move(sp)), aux_(std::move(aux)) {}

  std::string_view name() const override { return sp_->name(); }
  const Sp& sp() const { return *sp_; }
  SpAux* aux() const { return aux_.get(); }

 private:
  std::shared_ptr<const Sp> sp_;
  std::unique_ptr<SpAux> aux_;
};

/// Wraps an SP (and optional aux) as a procedure value.
inline Value make_procedure(std::shared_ptr<const Sp> sp, std::unique_ptr<SpAux> aux = nullptr) {
  return ProcPtr(std::make_shared<SpProcedure>(std::move(sp), std::move(aux)));
}

/// Throws the kArity error of an application of `name` to n operands, not lo to hi (check_arity).
[[noreturn]] void throw_arity(std::string_view name, size_t n, size_t lo, size_t hi);
/// Throws kArity unless lo <= args.size() <= hi: "normal: expected 2 arguments, got 3". Inline: every
/// application of a builtin checks it.
inline void check_arity(std::string_view name, const Args& args, size_t lo, size_t hi) {
  if (args.size() < lo || args.size() > hi) throw_arity(name, args.size(), lo, hi);
}
inline void check_arity(std::string_view name, const Args& args, size_t n) { check_arity(name, args, n, n); }

}  // namespace vnt
