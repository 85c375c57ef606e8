// The subsampled_mh kernel and exact mh through the partition: block checks, the refusal memo, the fallback to mh.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/infer/subsampled_mh.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "runtime/core/diagnostics.hpp"
#include "runtime/infer/mh.hpp"
#include "runtime/infer/subsampled_transition.hpp"
#include "runtime/regen/border_reach.hpp"
#include "runtime/regen/refresh.hpp"
#include "runtime/regen/section_group.hpp"
#include "runtime/scaffold/scaffold.hpp"
#include "runtime/syntax/expr.hpp"
#include "runtime/trace/trace.hpp"

namespace vnt {
namespace {

/// The error of a scope that cannot be subsampled, for `reason`.
[[noreturn]] void fail(const BlockSpec& spec, const BlockChoice& choice, const std::string& reason) {
  // The blocks of the default scope are its random choices, which the scope's name does not tell apart.
  std::string which;
  if (spec.scope == "default" && choice.principals.size() == 1 && choice.principals[0]->expr != nullptr)
    which = fmt::format(" (the random choice at {})", span_location(choice.principals[0]->expr->span));
  throw Error(ErrorKind::kInference,
              fmt::format("subsampled_mh: cannot subsample scope '{}'{}: {} (add 'fallback 'mh to use exact mh "
                          "instead)",
                          spec.scope, which, reason),
              spec.span);
}

/// What is known against partitioning the block before looking below the border: several principal nodes, or
/// the border's own problem (empty if none; info is then the border, null for N <= 1).
std::string block_problem(const BlockChoice& choice, BorderInfo& info) {
  if (choice.principals.size() != 1)
    return fmt::format("the block has {} random choices, but subsampling needs exactly one principal node",
                       choice.principals.size());
  info = find_border(choice.principals[0]);
  return info.problem;
}

}  // namespace

Rng& SubsampledState::order_rng(Trace& trace) {
  if (!order_rng_) order_rng_ = trace.rng().split();
  return *order_rng_;
}

const std::string* SubsampledState::refusal(const Trace& trace, const Node* border) const {
  const Refusal& r = refusal_;
  return r.trace == trace.id() && r.border == border && r.epoch == trace.shape_epoch() ? &r.reason : nullptr;
}

void SubsampledState::refuse(const Trace& trace, const Node* border, std::string reason, bool local) {
  refusal_ = Refusal{trace.id(), border, trace.shape_epoch(), std::move(reason), local};
}

SectionsToLook SubsampledState::sections_to_check(const Trace& trace, BorderReach& reach,
                                                  bool never_stale_only) const {
  const SectionsToLook all;
  const Node* border = reach.border();
  const Checked* c = sections_checked_[never_stale_only].find(border);
  if (c == nullptr || c->border != border->seq) return all;
  if (c->epoch == trace.shape_epoch()) return {0, {}};
  const std::optional<ShapeLog::Look> look = trace.shape_log().sections_to_look_at(
      c->epoch, trace.shape_epoch(), c->next_seq, c->border, [&](Node* n) { return reach.follows(n); });
  if (!look) return all;
  SectionsToLook out{look->last, {}};
  // A long walk up (a node reading many sections, which a look at any of them refuses) looks at all instead.
  constexpr size_t kMaxWalk = kMaxSectionRoots * kMaxSectionNodesPerRoot;
  for (Node* n : look->touched)
    if (!reach.section_roots(n, out.roots, kMaxWalk)) return all;
  return out;
}

void SubsampledState::note_sections_checked(Trace& trace, Node* border, bool never_stale_only) {
  sections_checked_[never_stale_only][border] = Checked{trace.shape_epoch(), trace.next_seq(), border->seq};
  trace.shape_log().watch(trace.shape_epoch());
}

namespace {

/// Runs `transition` through the partitioned scaffold of `border`, unless `state` has refused that border at the
/// trace's current shape. nullopt: refused now or before (the reason is state.refusal). A refused attempt puts
/// the trace's stream back, so exact mh then draws what it would have drawn alone.
template <class F>
std::optional<bool> attempt_partitioned(Trace& trace, SubsampledState& state, const Node* border, F&& transition) {
  if (state.refusal(trace, border) != nullptr) return std::nullopt;
  const Rng stream = trace.rng();
  try {
    return transition();
  } catch (const NotPartitionable& np) {
    trace.rng() = stream;
    state.refuse(trace, border, np.reason, np.local);
    return std::nullopt;
  }
}

/// partitioned_mh_transition's state: its refusal memo and its chains, kept by the trace. A chain is kept until
/// the trace's shape moves, as for subsampled_mh.
SubsampledState& partitioned_state(Trace& trace) {
  std::shared_ptr<void>& slot = trace.kernel_state();
  if (!slot) slot = std::make_shared<SubsampledState>();
  return *static_cast<SubsampledState*>(slot.get());
}

/// check_every_section for the border of `reach`, through the trace's memo: once per shape of the trace, O(N) node
/// sections as one exact transition (a node deleted since moved it); after directives that only add sections (a
/// [predict] reading the parameter), the new ones.
void check_sections(Trace& trace, BorderReach& reach, bool never_stale_only) {
  SubsampledState& memo = partitioned_state(trace);
  Node* border = reach.border();
  memo.sections_examined += check_every_section(trace, reach, memo.sections_to_check(trace, reach, never_stale_only),
                                                never_stale_only);
  memo.note_sections_checked(trace, border, never_stale_only);
  if (!never_stale_only) memo.note_sections_checked(trace, border, true);  // what passed all looks passes that one
}

}  // namespace

uint64_t partitioned_mh_chain_hits(Trace& trace) { return partitioned_state(trace).chains().hits(); }
const SubsampledStats& partitioned_mh_stats(Trace& trace) { return partitioned_state(trace).stats; }
uint64_t node_sections_checked(Trace& trace) { return partitioned_state(trace).sections_examined; }

std::shared_ptr<ChainCache> kernel_chains(Trace& trace, const std::string& scope) {
  std::shared_ptr<ChainCache>& c = partitioned_state(trace).scope_chains[scope];
  if (!c) c = std::make_shared<ChainCache>();
  return c;
}

std::optional<bool> partitioned_mh_transition(Trace& trace, const BlockChoice& choice, const BlockSpec& spec,
                                             std::optional<double> drift_sigma) {
  if (choice.principals.size() != 1) return std::nullopt;
  BorderInfo info = find_border(choice.principals[0]);
  if (!info.problem.empty() || info.border == nullptr) return std::nullopt;
  // Only plates below the border: the general scaffold is a handful of nodes, and scores each plate with one
  // pass over its rows (its old total is cached), half the work of scoring every row twice here.
  if (plate_rows(info.border) == info.n) return std::nullopt;
  SubsampledOptions opts;
  opts.epsilon = 0;
  opts.batch = info.n;
  opts.drift_sigma = drift_sigma;
  SubsampledState& state = partitioned_state(trace);
  state.cache().bind(0, info.n);
  std::optional<bool> a = attempt_partitioned(trace, state, info.border, [&] {
    return subsampled_transition(trace, spec, opts, state, choice, info, /*exact=*/true);
  });
  state.stats.transitions += a ? 1 : 0;
  state.stats.accepted += a.value_or(false) ? 1 : 0;
  return a;
}

void check_subsampling(Trace& trace, const BlockSpec& spec, const SubsampledOptions& opts) {
  if (opts.fallback_to_mh) return;
  auto check = [&](const BlockSpec& s, const BlockChoice& choice) {
    if (choice.principals.empty()) return;
    BorderInfo info;
    if (std::string problem = block_problem(choice, info); !problem.empty()) fail(s, choice, problem);
    if (info.border == nullptr) return;  // N <= 1: exact mh
    try {
      Node* principals[] = {choice.principals[0]};
      BorderReach reach(info.border);
      check_structure(trace, build_scaffold(trace, principals, {}, info.border), reach, false);
      check_sections(trace, reach, /*never_stale_only=*/false);
    } catch (const NotPartitionable& np) {
      fail(s, choice, np.reason);
    }
  };
  if (spec.mode != BlockSpec::Mode::kOne) return check(spec, select_block(trace, spec, /*allow_empty=*/true));
  if (spec.scope == "default") {  // each random choice is a block, and a transition may draw any of them
    for (Node* c : trace.random_choices().items()) check(spec, BlockChoice{{c}});
    return;
  }
  const Scope* scope = trace.scopes().find(spec.scope);
  if (scope == nullptr) return;
  for (const Value& b : scope->blocks().items()) {
    BlockSpec one = spec;
    one.mode = BlockSpec::Mode::kValue;
    one.block = b;
    check(one, select_block(trace, one, /*allow_empty=*/true));
  }
}

namespace {

/// One round of subsampled_mh_transition: the transition, or nullopt if repairing a stale section it read moved the
/// trace's shape (what was selected may be gone).
std::optional<bool> subsampled_round(Trace& trace, const BlockSpec& spec, const SubsampledOptions& opts,
                                     SubsampledState& state) {
  const BlockChoice choice = select_block(trace, spec, /*allow_empty=*/true);
  if (choice.principals.empty()) return false;
  MhOptions exact;
  exact.drift_sigma = opts.drift_sigma;
  exact.allow_partition = false;  // no border, or a block that cannot be partitioned: the general path
  auto run_exact = [&] {
    std::optional<bool> a = mh_on_principals(trace, choice, spec, exact);
    if (a) {
      ++state.stats.exact_transitions;
      state.stats.accepted += *a ? 1 : 0;
    }
    return a;
  };
  BorderInfo info;
  std::string problem = block_problem(choice, info);
  if (problem.empty()) {
    if (info.border == nullptr) return run_exact();  // N <= 1: exact MH
    // Sections that must never be left stale (NotPartitionable::never_stale) are looked for at each transition,
    // at the cost of what changed since the last look: [infer]'s check before its first transition sees only the
    // sections there then, and one made since (a move of another choice, say) would be left stale by an
    // approximate move that did not draw it: a choice in the block of the old value, under kernels that select
    // by block, or brush that a kernel on a choice it reads meets without a repair. Such a section refuses the
    // border: exact transitions with 'fallback 'mh, an error without. (Sections with a choice to resample are
    // left stale: every reader of the choice walks up to the stale root and repairs it.)
    if (!state.unchecked_for_tests && state.refusal(trace, info.border) == nullptr) {
      try {
        BorderReach reach(info.border);
        check_sections(trace, reach, /*never_stale_only=*/true);
      } catch (const NotPartitionable& np) {
        state.refuse(trace, info.border, np.reason, np.local);
      }
    }
    std::optional<std::optional<bool>> attempted = unless_shape_moved(trace, [&] {
      return attempt_partitioned(trace, state, info.border, [&] {
        return subsampled_transition(trace, spec, opts, state, choice, info, /*exact=*/false);
      });
    });
    if (!attempted) return std::nullopt;
    if (const std::optional<bool> a = *attempted) {
      state.stats.accepted += *a ? 1 : 0;
      return *a;
    }
    problem = *state.refusal(trace, info.border);
    // Exact mh through the partition regenerates the local sections this one refused (brush, a choice to
    // resample). It would refuse for the other reasons too, and its refused attempt, moving the shape epoch,
    // would make this kernel try again at every transition.
    exact.allow_partition = state.refused_locally();
  }
  if (!opts.fallback_to_mh) fail(spec, choice, problem);
  if (!state.fallback_reported) {
    state.fallback_reported = true;
    std::string where = span_location(spec.span);
    trace.warn(fmt::format("{}{}subsampled_mh: scope '{}' cannot be subsampled ({}); using exact mh", where,
                           where.empty() ? "" : ": ", spec.scope, problem));
  }
  return run_exact();
}

}  // namespace

bool subsampled_mh_transition(Trace& trace, const BlockSpec& spec, const SubsampledOptions& opts,
                              SubsampledState& state) {
  ++state.stats.transitions;
  state.cache().bind(opts.epsilon, opts.batch, opts.spending);
  Rng& order = state.order_rng(trace);  // split off before anything else draws, so exact-mh runs can mirror it
  // A round that a repair interrupts starts again with the numbers of the section-order stream too.
  const Rng order_stream = order;
  return until_not_interrupted(trace, [&] {
    order = order_stream;
    return subsampled_round(trace, spec, opts, state);
  });
}

}  // namespace vnt
