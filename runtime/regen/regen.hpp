// Regenerate and detach a scaffold (Eq. 3 weights), evaluate and un-evaluate families. Every function
// that throws leaves the trace as it was before the call.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "runtime/core/source_span.hpp"
#include "runtime/regen/db.hpp"
#include "runtime/scaffold/scaffold.hpp"
#include "runtime/trace/env.hpp"

namespace vnt {

struct Expr;
class Trace;

/// The frame an error raised inside a compound procedure's body gets for its call site `site`:
/// "in call to 'f' at file:line:col".
std::string call_frame(const Expr* site);

/// Detaches the scaffold walking its border in reverse; returns the rho weight. Old values go to `db`. If it fails
/// (out of memory), the trace is poisoned (Trace::must_complete): nothing undoes half a detach.
double detach_and_extract(Trace& trace, Scaffold& scaffold, Db& db);

/// detach_and_extract without the rho weight, for a state whose weight is known (gibbs's candidates): the same
/// state, values and families in `db`, with no density computed.
void detach_unscored(Trace& trace, Scaffold& scaffold, Db& db);

/// Regenerates the scaffold walking its border; returns the xi weight. With `restore`, every value and
/// family comes back from `db` (a rejected proposal), and a failure poisons the trace; otherwise `db` is only read
/// for proposal kernels, and a failed regen undoes itself, leaving the scaffold detached.
double regen_and_attach(Trace& trace, Scaffold& scaffold, bool restore, Db& db);

/// Regenerates a detached scaffold with its proposal (restore = false). If the proposal reaches a state of
/// probability zero (a domain error while regenerating), the old state is restored from `rho_db` and nullopt
/// is returned: the move is rejected. Other errors restore the old state and propagate, and so does a proposed
/// state with a density of +inf, as the kInference error "KERNEL: the proposal gives ..." (infinite_density.hpp).
std::optional<double> regen_proposal(Trace& trace, Scaffold& scaffold, Db& rho_db, std::string_view kernel);

/// Evaluates `e` in `env` (nullptr = global) as a new family; returns its root.
Node* eval_family(Trace& trace, Scaffold& scaffold, Db& db, const Expr* e, const EnvPtr& env, double* weight);

/// Un-evaluates a family created by eval_family; its nodes are then deleted with Trace::destroy_family. A failure
/// poisons the trace.
void uneval_family(Trace& trace, Scaffold& scaffold, Db& db, Node* root);

/// Makes the observed choice of the family `root` unobserved again (its SP forgets the observation).
void unconstrain(Trace& trace, Node* root);

/// Applies procedure value `proc` to constant arguments as a new family (used by mem).
Node* apply_to_values(Trace& trace, Scaffold& scaffold, Db& db, const Expr* site, const Value& proc,
                      const std::vector<Value>& args, double* weight);

/// Applies the procedure `op` evaluates to (usually a variable) to constant arguments as a new family.
Node* apply_expr_to_values(Trace& trace, Scaffold& scaffold, Db& db, const Expr* site, const Expr* op,
                           const std::vector<Value>& args, double* weight);

}  // namespace vnt
