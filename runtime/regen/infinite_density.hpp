// Densities of +inf in the trace: no MH ratio from or to such a state means anything (docs/inference.md, "States
// of infinite density"), so a transition that meets one fails. Kernels compare the weights they compute anyway (one
// comparison on the fast path); only then is the node found again and the message formatted.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "runtime/sp/sp.hpp"
#include "runtime/value/value.hpp"

namespace vnt {

struct Expr;
struct Node;
struct PlateNode;
struct Scaffold;
class Db;
class Trace;

/// Where a density is +inf: the random application and its value there (for a plate, one of its rows).
struct InfiniteDensity {
  const Expr* expr = nullptr;
  Value value;
  const PlateNode* plate = nullptr;
  size_t row = 0;  // of `plate`, from 0
};

/// Which state has the infinite density: the one a transition proposes, or the current one (which only an
/// approximate subsampled_mh move can have accepted, without scoring what is infinite).
enum class InfiniteIn { kProposal, kCurrentState };

/// The first density of +inf among those a regen of `s` (not a restore) scores and a detach of it takes, in the
/// state the trace holds: the absorbing nodes (each row of a plate), the principal nodes with a proposal kernel and
/// the observations regen attaches again, in the order of the border. nullopt if there is none.
std::optional<InfiniteDensity> find_infinite_density(Trace& trace, const Scaffold& s);
/// The same for a density of zero (log density -inf), to name what an impossible state rules out.
std::optional<InfiniteDensity> find_zero_density(Trace& trace, const Scaffold& s);

/// Throws kInference at the random application: for kProposal "KERNEL: the proposal gives EXPR an infinite density
/// at its value V", for kCurrentState "subsampled_mh: an approximate move (eps > 0) accepted a value under which EXPR
/// has an infinite density at its value V". A plate row also names the row, and gets the frame of its call.
[[noreturn]] void raise_infinite_density(const InfiniteDensity& where, InfiniteIn state, std::string_view kernel);

/// raise_infinite_density for the random application `leaf` at its value.
[[noreturn]] void raise_infinite_density_at(const Node* leaf, InfiniteIn state, std::string_view kernel);

/// detach_and_extract for a kernel. A weight of +inf or NaN is looked into: if a density of the current state is
/// +inf, the scaffold is attached again (the trace is as it was) and the error of kCurrentState thrown.
double detach_current(Trace& trace, Scaffold& scaffold, Db& rho_db);

/// For regen_proposal, after a regen of weight +inf or NaN: if a density of the proposed state is +inf, restores
/// the old state from `rho_db` and throws the error of kProposal. Returns otherwise (a NaN weight is rejected).
void refuse_infinite_proposal(Trace& trace, Scaffold& scaffold, Db& rho_db, std::string_view kernel);

}  // namespace vnt
