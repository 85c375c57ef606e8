// Metropolis-Hastings: detach (rho), regenerate with the proposal (xi), accept with probability
// min(1, exp(xi - rho + index correction)); on reject detach the proposal and restore from the rho Db.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/infer/mh.hpp"

#include <cmath>
#include <exception>

#include "runtime/core/diagnostics.hpp"
#include "runtime/infer/shape_touch.hpp"
#include "runtime/infer/subsampled_mh.hpp"
#include "runtime/regen/infinite_density.hpp"
#include "runtime/regen/refresh.hpp"
#include "runtime/regen/regen.hpp"
#include "runtime/regen/walk.hpp"
#include "runtime/syntax/expr.hpp"
#include "runtime/trace/trace.hpp"

namespace vnt {
namespace {

void check_drift_targets(const std::vector<Node*>& principals, const BlockSpec& spec) {
  for (Node* n : principals) {
    const SpProcedure* p = primitive_at(as_output(n));
    if (p == nullptr || !p->sp().real_valued()) {
      SourceSpan span = n->expr ? n->expr->span : spec.span;
      throw Error(ErrorKind::kInference,
                  fmt::format("{}: 'drift needs real-valued random choices, but scope '{}' includes a {} at {}",
                              spec.kernel, spec.scope, p ? p->sp().name() : "procedure", span_location(span)),
                  spec.span);
    }
  }
}

/// Accept iff log u < log_alpha; a move out of a zero-probability state is taken if it leads to positive
/// probability. u is drawn unless log_alpha is NaN, as the partitioned path draws it (which cannot tell a
/// state of probability zero from a proposal of probability zero when it meets the latter first).
bool decide(double rho, double xi, double correction, Rng& rng) {
  double log_alpha = xi - rho + correction;
  if (rho == kNegInf && !std::isnan(xi)) log_alpha = xi > kNegInf ? -kNegInf : kNegInf;
  if (std::isnan(log_alpha)) return false;
  return std::log(rng.uniform()) < log_alpha;
}

/// The body of mh_on_principals, which catches (unless_shape_moved) the ShapeMoved and DeferredRepair it throws when
/// a repair moved the shape.
bool mh_attempt(Trace& trace, const BlockChoice& choice, const BlockSpec& spec, const MhOptions& opts) {
  ShapeTouch shape{trace};  // unless the move cannot change which procedures applications use (checked below)
  ProposalKernels kernels;
  if (opts.drift_sigma) check_drift_targets(choice.principals, spec);
  if (opts.allow_partition && opts.decision == MhOptions::Decision::kMetropolis) {
    std::optional<bool> accepted = partitioned_mh_transition(trace, choice, spec, opts.drift_sigma);
    if (accepted) {
      shape.keep = true;  // it moved the epoch itself if it changed a procedure
      return *accepted;
    }
  }
  if (opts.drift_sigma) {
    for (Node* n : choice.principals) kernels[n] = ProposalKernel{ProposalKernel::Kind::kDrift, *opts.drift_sigma, {}};
  }
  Scaffold scaffold = build_scaffold(trace, choice.principals, std::move(kernels));
  if (!ensure_scaffold_fresh(trace, scaffold)) throw ShapeMoved{};  // as the partitioned path signals it
  // New brush reads values outside the scaffold: a repair it meets there is deferred (it could remove nodes of the
  // scaffold or of rho_db).
  HoldNodes hold(trace);
  const bool procedures_before = resamples_procedures(scaffold);
  Db rho_db(trace);
  double rho = detach_current(trace, scaffold, rho_db);
  std::optional<double> proposed = regen_proposal(trace, scaffold, rho_db, spec.kernel);
  if (!proposed) {  // a state of probability zero: rejected, already restored
    shape.keep = !procedures_before;
    return false;
  }
  double xi = *proposed;
  shape.keep = !procedures_before && !resamples_procedures(scaffold);  // neither the old values nor the new
  double correction = log_index_density(trace, spec) - choice.log_index_density;
  bool accept = opts.decision == MhOptions::Decision::kMetropolis ? decide(rho, xi, correction, trace.rng())
                                                                 : opts.decision == MhOptions::Decision::kAccept;
  if (accept) return true;
  Db xi_db(trace);
  detach_unscored(trace, scaffold, xi_db);
  regen_and_attach(trace, scaffold, true, rho_db);
  return false;
}

}  // namespace

std::optional<bool> mh_on_principals(Trace& trace, const BlockChoice& choice, const BlockSpec& spec,
                                     const MhOptions& opts) {
  return unless_shape_moved(trace, [&] { return mh_attempt(trace, choice, spec, opts); });
}

bool mh_transition(Trace& trace, const BlockSpec& spec, const MhOptions& opts) {
  return until_not_interrupted(trace, [&]() -> std::optional<bool> {
    // Validated before the run; if the block has emptied since (a structural change), make no move.
    BlockChoice choice = select_block(trace, spec, /*allow_empty=*/true);
    if (choice.principals.empty()) return false;
    return mh_on_principals(trace, choice, spec, opts);
  });
}

}  // namespace vnt
