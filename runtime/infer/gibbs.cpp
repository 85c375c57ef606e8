// Enumerative Gibbs: detach the block's scaffold (the current value's weight, rho), then for every other joint value
// regenerate with the choices forced to it, weigh, and detach again keeping what it made; attach the one drawn.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/infer/gibbs.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>
#include <optional>
#include <vector>

#include "runtime/core/diagnostics.hpp"
#include "runtime/core/error.hpp"
#include "runtime/infer/shape_touch.hpp"
#include "runtime/regen/infinite_density.hpp"
#include "runtime/regen/refresh.hpp"
#include "runtime/regen/regen.hpp"
#include "runtime/regen/walk.hpp"
#include "runtime/syntax/expr.hpp"
#include "runtime/trace/trace.hpp"

namespace vnt {
namespace {

[[noreturn]] void refuse(const BlockSpec& spec, const Node* n, std::string_view why) {
  const SourceSpan where = n->expr ? n->expr->span : SourceSpan{};
  throw Error(ErrorKind::kInference,
              fmt::format("gibbs: scope '{}' includes {} at {}, {}", spec.scope,
                          [&] {
                            const SpProcedure* p = primitive_at(as_output(const_cast<Node*>(n)));
                            return p ? std::string(p->sp().name()) : std::string("a procedure");
                          }(),
                          span_location(where), why),
              spec.span);
}

/// The values each principal can take, from its SP at its current arguments. Its arguments must not be computed
/// from another choice of the block: the values listed must be the same whichever of them the block holds.
std::vector<std::vector<Value>> supports(const std::vector<Node*>& principals, const Scaffold& scaffold,
                                         const BlockSpec& spec) {
  std::vector<std::vector<Value>> out;
  size_t joint = 1;
  for (Node* n : principals) {
    OutputNode* o = as_output(n);
    const SpProcedure* p = primitive_at(o);
    std::optional<std::vector<Value>> values;
    if (p != nullptr) {
      ArgBuffer buf(o);
      const Args args = buf.args(p->aux());
      values = principals.size() == 1 ? p->sp().enumerate_move(o->value, args) : p->sp().enumerate(args);
      if (!values && principals.size() > 1 && p->sp().enumerate_move(o->value, args))
        refuse(spec, n, "whose values can be listed only for a move of it alone (use block one)");
    }
    if (!values || values->empty())
      refuse(spec, n, fmt::format("whose values cannot be enumerated (gibbs takes {})", kEnumerableChoices));
    for (const Node* operand : o->operands)
      if (scaffold.is_resampling(operand))
        refuse(spec, n, "whose values depend on another choice of the block (use block one)");
    joint *= values->size();
    if (joint > kMaxGibbsValues)
      throw Error(ErrorKind::kInference,
                  fmt::format("gibbs: the block of scope '{}' has more than {} joint values ({} choices); use block "
                              "one, or smaller blocks",
                              spec.scope, kMaxGibbsValues, principals.size()),
                  spec.span);
    out.push_back(std::move(*values));
  }
  return out;
}

/// Whether the block picked by `choice` holds the same random choices now (after a candidate's regen, in the state
/// it made) as `before`, its principals sorted. `scratch` is the caller's, reused from candidate to candidate.
bool same_members(Trace& trace, const BlockSpec& spec, const BlockChoice& choice, const std::vector<Node*>& before,
                  std::vector<Node*>& scratch) {
  if (spec.scope == "default" && spec.mode != BlockSpec::Mode::kAll)
    return true;  // one choice, which no value of its own removes
  if (spec.mode == BlockSpec::Mode::kAll)
    scratch = select_block(trace, spec, /*allow_empty=*/true).principals;
  else
    random_choices_in_block(trace, spec.scope, choice.block, scratch);
  if (scratch.size() != before.size()) return false;
  std::sort(scratch.begin(), scratch.end());
  return scratch == before;
}

/// Every joint value of the block, in mixed-radix order (the first choice varies slowest), one after another: the
/// i-th choice of candidate c is at c * each.size() + i. One vector, not one per candidate: a collapsed seat's move
/// weighs every table.
std::vector<Value> joint_values(std::vector<std::vector<Value>> each) {
  if (each.size() == 1) return std::move(each[0]);
  std::vector<Value> all;
  size_t width = 0, count = 1;  // of `all`'s candidates so far
  for (const std::vector<Value>& values : each) {
    std::vector<Value> next;
    next.reserve(count * values.size() * (width + 1));
    for (size_t c = 0; c < count; ++c)
      for (const Value& v : values) {
        next.insert(next.end(), all.begin() + static_cast<std::ptrdiff_t>(c * width),
                    all.begin() + static_cast<std::ptrdiff_t>((c + 1) * width));
        next.push_back(v);
      }
    all = std::move(next);
    count *= values.size();
    ++width;
  }
  return all;
}

/// Regenerates the detached scaffold with its forced values; nullopt for a state of probability zero (the scaffold
/// is then detached again). Any other error attaches the current state again from `rho_db` and propagates, as does
/// a density of +inf (the error of regen_proposal).
std::optional<double> weigh(Trace& trace, Scaffold& scaffold, Db& rho_db) {
  double w = 0;
  try {
    w = regen_and_attach(trace, scaffold, false, rho_db);
  } catch (...) {
    if (impossibility_in_flight()) return std::nullopt;  // the failed regen undid itself
    regen_and_attach(trace, scaffold, true, rho_db);
    throw;
  }
  if (!(w < kPosInf)) [[unlikely]]
    refuse_infinite_proposal(trace, scaffold, rho_db, "gibbs");  // throws if a density is +inf; else NaN
  return std::isnan(w) ? std::nullopt : std::optional<double>(w);
}

/// Detaches a candidate's state and attaches the current one again from `rho_db` (both steps must complete).
void put_current_back(Trace& trace, Scaffold& scaffold, Db& rho_db) {
  Db discard(trace);
  detach_unscored(trace, scaffold, discard);
  regen_and_attach(trace, scaffold, true, rho_db);
}

bool gibbs_attempt(Trace& trace, const BlockChoice& choice, const BlockSpec& spec) {
  ShapeTouch touch{trace};  // kept unless a procedure moved (below)
  ProposalKernels kernels;
  for (Node* n : choice.principals) kernels[n] = ProposalKernel{ProposalKernel::Kind::kForce, 0, n->value};
  Scaffold scaffold = build_scaffold(trace, choice.principals, std::move(kernels));
  if (!ensure_scaffold_fresh(trace, scaffold)) throw ShapeMoved{};
  HoldNodes hold(trace);
  // A choice that exists only for some values of another would be scored once per value of its own where it does
  // not exist: the joint values would count that state twice.
  for (Node* n : choice.principals)
    if (scaffold.is_brush(n)) refuse(spec, n, "which exists only for some values of another choice of the block "
                                              "(use block one)");
  const size_t width = choice.principals.size();
  std::vector<Value> all = joint_values(supports(choice.principals, scaffold, spec));
  size_t count = all.size() / width;
  size_t at = count;  // the current value's candidate
  for (size_t c = 0; c < count && at == count; ++c) {
    bool same = true;
    for (size_t i = 0; i < width && same; ++i) same = values_equal(all[c * width + i], choice.principals[i]->value);
    if (same) at = c;
  }
  // A current value the SP does not list (it cannot have drawn it): a candidate of its own.
  if (at == count) {
    for (Node* n : choice.principals) all.push_back(n->value);
    ++count;
  }

  // Allocated before the detach below: running out of memory after it would leave the scaffold detached.
  std::vector<Node*> sorted_principals = choice.principals;
  std::sort(sorted_principals.begin(), sorted_principals.end());
  bool procedures = resamples_procedures(scaffold);  // the current values, then each candidate's
  Db rho_db(trace);
  std::vector<double> weights(count, kNegInf);
  // What each candidate's regen made, detached again (one allocation for all of them).
  const std::unique_ptr<std::optional<Db>[]> made = std::make_unique<std::optional<Db>[]>(count);
  weights[at] = detach_current(trace, scaffold, rho_db) + choice.log_index_density;
  std::vector<Node*> members;
  for (size_t c = 0; c < count; ++c) {
    if (c == at) continue;
    for (size_t i = 0; i < width; ++i) scaffold.kernels[choice.principals[i]].forced = all[c * width + i];
    const std::optional<double> w = weigh(trace, scaffold, rho_db);
    if (!w) continue;
    // Until it is detached again the candidate's state is attached: an error on the way (out of memory) puts the
    // current state back before it propagates.
    bool block_changes = false;
    try {
      // The same block must hold the same choices in every state it moves between, or the move from the new state
      // back would score other values: a value that adds a choice to the block (in a branch it takes) is refused.
      block_changes = !same_members(trace, spec, choice, sorted_principals, members);
      if (!block_changes) {
        procedures = procedures || resamples_procedures(scaffold);
        // Picking this block again from the state it leads to: the number of blocks may differ there.
        weights[c] = *w + log_index_density(trace, spec);
        made[c].emplace(trace);
      }
    } catch (...) {
      put_current_back(trace, scaffold, rho_db);
      throw;
    }
    if (block_changes) {
      put_current_back(trace, scaffold, rho_db);
      throw Error(ErrorKind::kInference,
                  fmt::format("gibbs: a value of the block of scope '{}' changes which random choices the block holds "
                              "(a choice in a branch it decides): give that choice a block of its own and use one",
                              spec.scope),
                  spec.span);
    }
    detach_unscored(trace, scaffold, *made[c]);  // its weight is known
  }

  // Draw one in proportion to exp(weight); a NaN weight counts as zero. All zero: the current state stays.
  double top = kNegInf;
  for (double w : weights)
    if (w > top) top = w;
  size_t pick = at;
  if (top > kNegInf) {
    double total = 0;
    for (double& w : weights) total += (w = std::isnan(w) ? 0.0 : std::exp(w - top));
    double u = trace.rng().uniform() * total;
    for (size_t c = 0; c < weights.size(); ++c) {
      if (weights[c] == 0.0) continue;
      pick = c;  // the last one of positive weight, if rounding leaves u above the sum
      if (u < weights[c]) break;
      u -= weights[c];
    }
  }
  regen_and_attach(trace, scaffold, true, pick == at ? rho_db : *made[pick]);
  touch.keep = !procedures;
  return pick != at;
}

}  // namespace

bool gibbs_transition(Trace& trace, const BlockSpec& spec) {
  return until_not_interrupted(trace, [&]() -> std::optional<bool> {
    BlockChoice choice = select_block(trace, spec, /*allow_empty=*/true);
    if (choice.principals.empty()) return false;
    return unless_shape_moved(trace, [&] { return gibbs_attempt(trace, choice, spec); });
  });
}

}  // namespace vnt
