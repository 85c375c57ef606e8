// Finding and reporting a density of +inf in a scaffold's states (see infinite_density.hpp). All of it is the cold
// path of a comparison that kernels make on the weights they compute.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/regen/infinite_density.hpp"

#include <fmt/format.h>

#include "runtime/core/diagnostics.hpp"
#include "runtime/core/error.hpp"
#include "runtime/regen/regen.hpp"
#include "runtime/regen/walk.hpp"
#include "runtime/syntax/expr.hpp"

namespace vnt {
namespace {

/// The log density of the random application `n` at its value: what attach adds (before incorporating the value)
/// and detach takes (after unincorporating it). An SP that throws scored nothing.
double density_at(Node* n) {
  if (n->kind != NodeKind::kOutput) return 0;
  OutputNode* out = as_output(n);
  const SpProcedure* p = primitive_at(out);
  if (p == nullptr) return 0;
  ArgBuffer buf(out);
  Args args = buf.args(p->aux());
  p->sp().unincorporate(out->value, args);
  double lp = 0;
  try {
    lp = p->sp().log_density(out->value, args);
  } catch (const Error&) {
    lp = 0;
  }
  p->sp().incorporate(out->value, args);
  return lp;
}

std::optional<InfiniteDensity> row_at(PlateNode* plate, double target) {
  PlateEvaluator ev(*plate, current_inputs(*plate));
  for (size_t i = 0; i < plate->rows; ++i) {
    double lp = 0;
    try {
      lp = ev.row(i);
    } catch (const Error&) {
      continue;
    }
    if (lp == target) return InfiniteDensity{plate->program->ops.back().expr, plate->observed.value(i), plate, i};
  }
  return std::nullopt;
}

std::optional<InfiniteDensity> at_node(Node* n, double target) {
  if (density_at(n) != target) return std::nullopt;
  return InfiniteDensity{n->expr, n->value};
}

/// The first random application of the scaffold's state whose log density is `target`.
std::optional<InfiniteDensity> find_density(Trace& trace, const Scaffold& s, double target) {
  for (Node* n : s.border) {
    std::optional<InfiniteDensity> found;
    if (s.is_absorbing(n)) {
      found = n->kind == NodeKind::kPlate ? row_at(as_plate(n), target) : at_node(n, target);
    } else if (n->observation_root && s.is_resampling(n)) {
      if (Node* c = trace.constrainable(n)) found = at_node(c, target);
    }
    if (found) return found;
  }
  for (Node* n : s.principals)
    if (s.kernels.contains(n))
      if (std::optional<InfiniteDensity> found = at_node(n, target)) return found;
  return std::nullopt;
}

}  // namespace

std::optional<InfiniteDensity> find_infinite_density(Trace& trace, const Scaffold& s) {
  return find_density(trace, s, kPosInf);
}

std::optional<InfiniteDensity> find_zero_density(Trace& trace, const Scaffold& s) {
  return find_density(trace, s, kNegInf);
}

void raise_infinite_density(const InfiniteDensity& where, InfiniteIn state, std::string_view kernel) {
  const std::string expr = where.expr != nullptr ? where.expr->text() : std::string("a random choice");
  std::string message =
      state == InfiniteIn::kProposal
          ? fmt::format("{}: the proposal gives {} an infinite density at its value {}", kernel, expr,
                        to_string(where.value))
          : fmt::format("subsampled_mh: an approximate move (eps > 0) accepted a value under which {} has an infinite "
                        "density at its value {}",
                        expr, to_string(where.value));
  const Expr* site = where.plate != nullptr ? where.plate->expr : nullptr;
  if (site != nullptr) message += fmt::format(" (row {} of {})", where.row + 1, site->text());
  Error e(ErrorKind::kInference, std::move(message), where.expr != nullptr ? where.expr->span : SourceSpan{});
  if (site != nullptr) e.add_frame(call_frame(site));
  throw e;
}

void raise_infinite_density_at(const Node* leaf, InfiniteIn state, std::string_view kernel) {
  raise_infinite_density(leaf != nullptr ? InfiniteDensity{leaf->expr, leaf->value} : InfiniteDensity{}, state,
                         kernel);
}

double detach_current(Trace& trace, Scaffold& scaffold, Db& rho_db) {
  const double rho = detach_and_extract(trace, scaffold, rho_db);
  if (rho < kPosInf) return rho;
  // Attached again to look: the detached state has no values to score.
  regen_and_attach(trace, scaffold, true, rho_db);
  if (std::optional<InfiniteDensity> found = find_infinite_density(trace, scaffold))
    raise_infinite_density(*found, InfiniteIn::kCurrentState, {});
  return detach_and_extract(trace, scaffold, rho_db);  // NaN: a density of NaN, which decides a rejection
}

void refuse_infinite_proposal(Trace& trace, Scaffold& scaffold, Db& rho_db, std::string_view kernel) {
  std::optional<InfiniteDensity> found = find_infinite_density(trace, scaffold);
  if (!found) return;
  Db xi_db(trace);
  detach_and_extract(trace, scaffold, xi_db);
  regen_and_attach(trace, scaffold, true, rho_db);
  raise_infinite_density(*found, InfiniteIn::kProposal, kernel);
}

}  // namespace vnt
